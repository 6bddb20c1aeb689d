"""The language model seam and its litellm implementation (imported lazily)."""
