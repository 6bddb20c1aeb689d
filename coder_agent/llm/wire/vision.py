"""Whether a model takes images, as litellm's model map says, answered in about a millisecond. Stdlib only.

`initialize` is answered before anything heavy is imported (see `prestart.early`), yet its
`promptCapabilities.image` depends on the configured model: `model_info` looks only the model's entries up
(`model_map.find`, ~1-2 ms). A model it does not find takes no images: litellm says the same of models it does not
know. `tests/llm/test_vision.py` compares the answers with litellm's for the map's chat models.
"""

from __future__ import annotations

from . import model_info


def sees_images(model: str | None) -> bool:
    """Whether litellm's map says `model` takes images (`supports_vision`); False when it cannot say."""
    return model_info.info(model).supports_vision
