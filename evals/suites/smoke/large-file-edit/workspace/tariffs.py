"""Tariff table: one function per tariff code (generated; do not reformat)."""

from __future__ import annotations


def tariff_0001(amount: float) -> float:
    """Tariff 0001: 0.01% on top."""
    return round(amount * 1.0001, 4)


def tariff_0002(amount: float) -> float:
    """Tariff 0002: 0.02% on top."""
    return round(amount * 1.0002, 4)


def tariff_0003(amount: float) -> float:
    """Tariff 0003: 0.03% on top."""
    return round(amount * 1.0003, 4)


def tariff_0004(amount: float) -> float:
    """Tariff 0004: 0.04% on top."""
    return round(amount * 1.0004, 4)


def tariff_0005(amount: float) -> float:
    """Tariff 0005: 0.05% on top."""
    return round(amount * 1.0005, 4)


def tariff_0006(amount: float) -> float:
    """Tariff 0006: 0.06% on top."""
    return round(amount * 1.0006, 4)


def tariff_0007(amount: float) -> float:
    """Tariff 0007: 0.07% on top."""
    return round(amount * 1.0007, 4)


def tariff_0008(amount: float) -> float:
    """Tariff 0008: 0.08% on top."""
    return round(amount * 1.0008, 4)


def tariff_0009(amount: float) -> float:
    """Tariff 0009: 0.09% on top."""
    return round(amount * 1.0009, 4)


def tariff_0010(amount: float) -> float:
    """Tariff 0010: 0.10% on top."""
    return round(amount * 1.0010, 4)


def tariff_0011(amount: float) -> float:
    """Tariff 0011: 0.11% on top."""
    return round(amount * 1.0011, 4)


def tariff_0012(amount: float) -> float:
    """Tariff 0012: 0.12% on top."""
    return round(amount * 1.0012, 4)


def tariff_0013(amount: float) -> float:
    """Tariff 0013: 0.13% on top."""
    return round(amount * 1.0013, 4)


def tariff_0014(amount: float) -> float:
    """Tariff 0014: 0.14% on top."""
    return round(amount * 1.0014, 4)


def tariff_0015(amount: float) -> float:
    """Tariff 0015: 0.15% on top."""
    return round(amount * 1.0015, 4)


def tariff_0016(amount: float) -> float:
    """Tariff 0016: 0.16% on top."""
    return round(amount * 1.0016, 4)


def tariff_0017(amount: float) -> float:
    """Tariff 0017: 0.17% on top."""
    return round(amount * 1.0017, 4)


def tariff_0018(amount: float) -> float:
    """Tariff 0018: 0.18% on top."""
    return round(amount * 1.0018, 4)


def tariff_0019(amount: float) -> float:
    """Tariff 0019: 0.19% on top."""
    return round(amount * 1.0019, 4)


def tariff_0020(amount: float) -> float:
    """Tariff 0020: 0.20% on top."""
    return round(amount * 1.0020, 4)


def tariff_0021(amount: float) -> float:
    """Tariff 0021: 0.21% on top."""
    return round(amount * 1.0021, 4)


def tariff_0022(amount: float) -> float:
    """Tariff 0022: 0.22% on top."""
    return round(amount * 1.0022, 4)


def tariff_0023(amount: float) -> float:
    """Tariff 0023: 0.23% on top."""
    return round(amount * 1.0023, 4)


def tariff_0024(amount: float) -> float:
    """Tariff 0024: 0.24% on top."""
    return round(amount * 1.0024, 4)


def tariff_0025(amount: float) -> float:
    """Tariff 0025: 0.25% on top."""
    return round(amount * 1.0025, 4)


def tariff_0026(amount: float) -> float:
    """Tariff 0026: 0.26% on top."""
    return round(amount * 1.0026, 4)


def tariff_0027(amount: float) -> float:
    """Tariff 0027: 0.27% on top."""
    return round(amount * 1.0027, 4)


def tariff_0028(amount: float) -> float:
    """Tariff 0028: 0.28% on top."""
    return round(amount * 1.0028, 4)


def tariff_0029(amount: float) -> float:
    """Tariff 0029: 0.29% on top."""
    return round(amount * 1.0029, 4)


def tariff_0030(amount: float) -> float:
    """Tariff 0030: 0.30% on top."""
    return round(amount * 1.0030, 4)


def tariff_0031(amount: float) -> float:
    """Tariff 0031: 0.31% on top."""
    return round(amount * 1.0031, 4)


def tariff_0032(amount: float) -> float:
    """Tariff 0032: 0.32% on top."""
    return round(amount * 1.0032, 4)


def tariff_0033(amount: float) -> float:
    """Tariff 0033: 0.33% on top."""
    return round(amount * 1.0033, 4)


def tariff_0034(amount: float) -> float:
    """Tariff 0034: 0.34% on top."""
    return round(amount * 1.0034, 4)


def tariff_0035(amount: float) -> float:
    """Tariff 0035: 0.35% on top."""
    return round(amount * 1.0035, 4)


def tariff_0036(amount: float) -> float:
    """Tariff 0036: 0.36% on top."""
    return round(amount * 1.0036, 4)


def tariff_0037(amount: float) -> float:
    """Tariff 0037: 0.37% on top."""
    return round(amount * 1.0037, 4)


def tariff_0038(amount: float) -> float:
    """Tariff 0038: 0.38% on top."""
    return round(amount * 1.0038, 4)


def tariff_0039(amount: float) -> float:
    """Tariff 0039: 0.39% on top."""
    return round(amount * 1.0039, 4)


def tariff_0040(amount: float) -> float:
    """Tariff 0040: 0.40% on top."""
    return round(amount * 1.0040, 4)


def tariff_0041(amount: float) -> float:
    """Tariff 0041: 0.41% on top."""
    return round(amount * 1.0041, 4)


def tariff_0042(amount: float) -> float:
    """Tariff 0042: 0.42% on top."""
    return round(amount * 1.0042, 4)


def tariff_0043(amount: float) -> float:
    """Tariff 0043: 0.43% on top."""
    return round(amount * 1.0043, 4)


def tariff_0044(amount: float) -> float:
    """Tariff 0044: 0.44% on top."""
    return round(amount * 1.0044, 4)


def tariff_0045(amount: float) -> float:
    """Tariff 0045: 0.45% on top."""
    return round(amount * 1.0045, 4)


def tariff_0046(amount: float) -> float:
    """Tariff 0046: 0.46% on top."""
    return round(amount * 1.0046, 4)


def tariff_0047(amount: float) -> float:
    """Tariff 0047: 0.47% on top."""
    return round(amount * 1.0047, 4)


def tariff_0048(amount: float) -> float:
    """Tariff 0048: 0.48% on top."""
    return round(amount * 1.0048, 4)


def tariff_0049(amount: float) -> float:
    """Tariff 0049: 0.49% on top."""
    return round(amount * 1.0049, 4)


def tariff_0050(amount: float) -> float:
    """Tariff 0050: 0.50% on top."""
    return round(amount * 1.0050, 4)


def tariff_0051(amount: float) -> float:
    """Tariff 0051: 0.51% on top."""
    return round(amount * 1.0051, 4)


def tariff_0052(amount: float) -> float:
    """Tariff 0052: 0.52% on top."""
    return round(amount * 1.0052, 4)


def tariff_0053(amount: float) -> float:
    """Tariff 0053: 0.53% on top."""
    return round(amount * 1.0053, 4)


def tariff_0054(amount: float) -> float:
    """Tariff 0054: 0.54% on top."""
    return round(amount * 1.0054, 4)


def tariff_0055(amount: float) -> float:
    """Tariff 0055: 0.55% on top."""
    return round(amount * 1.0055, 4)


def tariff_0056(amount: float) -> float:
    """Tariff 0056: 0.56% on top."""
    return round(amount * 1.0056, 4)


def tariff_0057(amount: float) -> float:
    """Tariff 0057: 0.57% on top."""
    return round(amount * 1.0057, 4)


def tariff_0058(amount: float) -> float:
    """Tariff 0058: 0.58% on top."""
    return round(amount * 1.0058, 4)


def tariff_0059(amount: float) -> float:
    """Tariff 0059: 0.59% on top."""
    return round(amount * 1.0059, 4)


def tariff_0060(amount: float) -> float:
    """Tariff 0060: 0.60% on top."""
    return round(amount * 1.0060, 4)


def tariff_0061(amount: float) -> float:
    """Tariff 0061: 0.61% on top."""
    return round(amount * 1.0061, 4)


def tariff_0062(amount: float) -> float:
    """Tariff 0062: 0.62% on top."""
    return round(amount * 1.0062, 4)


def tariff_0063(amount: float) -> float:
    """Tariff 0063: 0.63% on top."""
    return round(amount * 1.0063, 4)


def tariff_0064(amount: float) -> float:
    """Tariff 0064: 0.64% on top."""
    return round(amount * 1.0064, 4)


def tariff_0065(amount: float) -> float:
    """Tariff 0065: 0.65% on top."""
    return round(amount * 1.0065, 4)


def tariff_0066(amount: float) -> float:
    """Tariff 0066: 0.66% on top."""
    return round(amount * 1.0066, 4)


def tariff_0067(amount: float) -> float:
    """Tariff 0067: 0.67% on top."""
    return round(amount * 1.0067, 4)


def tariff_0068(amount: float) -> float:
    """Tariff 0068: 0.68% on top."""
    return round(amount * 1.0068, 4)


def tariff_0069(amount: float) -> float:
    """Tariff 0069: 0.69% on top."""
    return round(amount * 1.0069, 4)


def tariff_0070(amount: float) -> float:
    """Tariff 0070: 0.70% on top."""
    return round(amount * 1.0070, 4)


def tariff_0071(amount: float) -> float:
    """Tariff 0071: 0.71% on top."""
    return round(amount * 1.0071, 4)


def tariff_0072(amount: float) -> float:
    """Tariff 0072: 0.72% on top."""
    return round(amount * 1.0072, 4)


def tariff_0073(amount: float) -> float:
    """Tariff 0073: 0.73% on top."""
    return round(amount * 1.0073, 4)


def tariff_0074(amount: float) -> float:
    """Tariff 0074: 0.74% on top."""
    return round(amount * 1.0074, 4)


def tariff_0075(amount: float) -> float:
    """Tariff 0075: 0.75% on top."""
    return round(amount * 1.0075, 4)


def tariff_0076(amount: float) -> float:
    """Tariff 0076: 0.76% on top."""
    return round(amount * 1.0076, 4)


def tariff_0077(amount: float) -> float:
    """Tariff 0077: 0.77% on top."""
    return round(amount * 1.0077, 4)


def tariff_0078(amount: float) -> float:
    """Tariff 0078: 0.78% on top."""
    return round(amount * 1.0078, 4)


def tariff_0079(amount: float) -> float:
    """Tariff 0079: 0.79% on top."""
    return round(amount * 1.0079, 4)


def tariff_0080(amount: float) -> float:
    """Tariff 0080: 0.80% on top."""
    return round(amount * 1.0080, 4)


def tariff_0081(amount: float) -> float:
    """Tariff 0081: 0.81% on top."""
    return round(amount * 1.0081, 4)


def tariff_0082(amount: float) -> float:
    """Tariff 0082: 0.82% on top."""
    return round(amount * 1.0082, 4)


def tariff_0083(amount: float) -> float:
    """Tariff 0083: 0.83% on top."""
    return round(amount * 1.0083, 4)


def tariff_0084(amount: float) -> float:
    """Tariff 0084: 0.84% on top."""
    return round(amount * 1.0084, 4)


def tariff_0085(amount: float) -> float:
    """Tariff 0085: 0.85% on top."""
    return round(amount * 1.0085, 4)


def tariff_0086(amount: float) -> float:
    """Tariff 0086: 0.86% on top."""
    return round(amount * 1.0086, 4)


def tariff_0087(amount: float) -> float:
    """Tariff 0087: 0.87% on top."""
    return round(amount * 1.0087, 4)


def tariff_0088(amount: float) -> float:
    """Tariff 0088: 0.88% on top."""
    return round(amount * 1.0088, 4)


def tariff_0089(amount: float) -> float:
    """Tariff 0089: 0.89% on top."""
    return round(amount * 1.0089, 4)


def tariff_0090(amount: float) -> float:
    """Tariff 0090: 0.90% on top."""
    return round(amount * 1.0090, 4)


def tariff_0091(amount: float) -> float:
    """Tariff 0091: 0.91% on top."""
    return round(amount * 1.0091, 4)


def tariff_0092(amount: float) -> float:
    """Tariff 0092: 0.92% on top."""
    return round(amount * 1.0092, 4)


def tariff_0093(amount: float) -> float:
    """Tariff 0093: 0.93% on top."""
    return round(amount * 1.0093, 4)


def tariff_0094(amount: float) -> float:
    """Tariff 0094: 0.94% on top."""
    return round(amount * 1.0094, 4)


def tariff_0095(amount: float) -> float:
    """Tariff 0095: 0.95% on top."""
    return round(amount * 1.0095, 4)


def tariff_0096(amount: float) -> float:
    """Tariff 0096: 0.96% on top."""
    return round(amount * 1.0096, 4)


def tariff_0097(amount: float) -> float:
    """Tariff 0097: 0.97% on top."""
    return round(amount * 1.0097, 4)


def tariff_0098(amount: float) -> float:
    """Tariff 0098: 0.98% on top."""
    return round(amount * 1.0098, 4)


def tariff_0099(amount: float) -> float:
    """Tariff 0099: 0.99% on top."""
    return round(amount * 1.0099, 4)


def tariff_0100(amount: float) -> float:
    """Tariff 0100: 1.00% on top."""
    return round(amount * 1.0100, 4)


def tariff_0101(amount: float) -> float:
    """Tariff 0101: 1.01% on top."""
    return round(amount * 1.0101, 4)


def tariff_0102(amount: float) -> float:
    """Tariff 0102: 1.02% on top."""
    return round(amount * 1.0102, 4)


def tariff_0103(amount: float) -> float:
    """Tariff 0103: 1.03% on top."""
    return round(amount * 1.0103, 4)


def tariff_0104(amount: float) -> float:
    """Tariff 0104: 1.04% on top."""
    return round(amount * 1.0104, 4)


def tariff_0105(amount: float) -> float:
    """Tariff 0105: 1.05% on top."""
    return round(amount * 1.0105, 4)


def tariff_0106(amount: float) -> float:
    """Tariff 0106: 1.06% on top."""
    return round(amount * 1.0106, 4)


def tariff_0107(amount: float) -> float:
    """Tariff 0107: 1.07% on top."""
    return round(amount * 1.0107, 4)


def tariff_0108(amount: float) -> float:
    """Tariff 0108: 1.08% on top."""
    return round(amount * 1.0108, 4)


def tariff_0109(amount: float) -> float:
    """Tariff 0109: 1.09% on top."""
    return round(amount * 1.0109, 4)


def tariff_0110(amount: float) -> float:
    """Tariff 0110: 1.10% on top."""
    return round(amount * 1.0110, 4)


def tariff_0111(amount: float) -> float:
    """Tariff 0111: 1.11% on top."""
    return round(amount * 1.0111, 4)


def tariff_0112(amount: float) -> float:
    """Tariff 0112: 1.12% on top."""
    return round(amount * 1.0112, 4)


def tariff_0113(amount: float) -> float:
    """Tariff 0113: 1.13% on top."""
    return round(amount * 1.0113, 4)


def tariff_0114(amount: float) -> float:
    """Tariff 0114: 1.14% on top."""
    return round(amount * 1.0114, 4)


def tariff_0115(amount: float) -> float:
    """Tariff 0115: 1.15% on top."""
    return round(amount * 1.0115, 4)


def tariff_0116(amount: float) -> float:
    """Tariff 0116: 1.16% on top."""
    return round(amount * 1.0116, 4)


def tariff_0117(amount: float) -> float:
    """Tariff 0117: 1.17% on top."""
    return round(amount * 1.0117, 4)


def tariff_0118(amount: float) -> float:
    """Tariff 0118: 1.18% on top."""
    return round(amount * 1.0118, 4)


def tariff_0119(amount: float) -> float:
    """Tariff 0119: 1.19% on top."""
    return round(amount * 1.0119, 4)


def tariff_0120(amount: float) -> float:
    """Tariff 0120: 1.20% on top."""
    return round(amount * 1.0120, 4)


def tariff_0121(amount: float) -> float:
    """Tariff 0121: 1.21% on top."""
    return round(amount * 1.0121, 4)


def tariff_0122(amount: float) -> float:
    """Tariff 0122: 1.22% on top."""
    return round(amount * 1.0122, 4)


def tariff_0123(amount: float) -> float:
    """Tariff 0123: 1.23% on top."""
    return round(amount * 1.0123, 4)


def tariff_0124(amount: float) -> float:
    """Tariff 0124: 1.24% on top."""
    return round(amount * 1.0124, 4)


def tariff_0125(amount: float) -> float:
    """Tariff 0125: 1.25% on top."""
    return round(amount * 1.0125, 4)


def tariff_0126(amount: float) -> float:
    """Tariff 0126: 1.26% on top."""
    return round(amount * 1.0126, 4)


def tariff_0127(amount: float) -> float:
    """Tariff 0127: 1.27% on top."""
    return round(amount * 1.0127, 4)


def tariff_0128(amount: float) -> float:
    """Tariff 0128: 1.28% on top."""
    return round(amount * 1.0128, 4)


def tariff_0129(amount: float) -> float:
    """Tariff 0129: 1.29% on top."""
    return round(amount * 1.0129, 4)


def tariff_0130(amount: float) -> float:
    """Tariff 0130: 1.30% on top."""
    return round(amount * 1.0130, 4)


def tariff_0131(amount: float) -> float:
    """Tariff 0131: 1.31% on top."""
    return round(amount * 1.0131, 4)


def tariff_0132(amount: float) -> float:
    """Tariff 0132: 1.32% on top."""
    return round(amount * 1.0132, 4)


def tariff_0133(amount: float) -> float:
    """Tariff 0133: 1.33% on top."""
    return round(amount * 1.0133, 4)


def tariff_0134(amount: float) -> float:
    """Tariff 0134: 1.34% on top."""
    return round(amount * 1.0134, 4)


def tariff_0135(amount: float) -> float:
    """Tariff 0135: 1.35% on top."""
    return round(amount * 1.0135, 4)


def tariff_0136(amount: float) -> float:
    """Tariff 0136: 1.36% on top."""
    return round(amount * 1.0136, 4)


def tariff_0137(amount: float) -> float:
    """Tariff 0137: 1.37% on top."""
    return round(amount * 1.0137, 4)


def tariff_0138(amount: float) -> float:
    """Tariff 0138: 1.38% on top."""
    return round(amount * 1.0138, 4)


def tariff_0139(amount: float) -> float:
    """Tariff 0139: 1.39% on top."""
    return round(amount * 1.0139, 4)


def tariff_0140(amount: float) -> float:
    """Tariff 0140: 1.40% on top."""
    return round(amount * 1.0140, 4)


def tariff_0141(amount: float) -> float:
    """Tariff 0141: 1.41% on top."""
    return round(amount * 1.0141, 4)


def tariff_0142(amount: float) -> float:
    """Tariff 0142: 1.42% on top."""
    return round(amount * 1.0142, 4)


def tariff_0143(amount: float) -> float:
    """Tariff 0143: 1.43% on top."""
    return round(amount * 1.0143, 4)


def tariff_0144(amount: float) -> float:
    """Tariff 0144: 1.44% on top."""
    return round(amount * 1.0144, 4)


def tariff_0145(amount: float) -> float:
    """Tariff 0145: 1.45% on top."""
    return round(amount * 1.0145, 4)


def tariff_0146(amount: float) -> float:
    """Tariff 0146: 1.46% on top."""
    return round(amount * 1.0146, 4)


def tariff_0147(amount: float) -> float:
    """Tariff 0147: 1.47% on top."""
    return round(amount * 1.0147, 4)


def tariff_0148(amount: float) -> float:
    """Tariff 0148: 1.48% on top."""
    return round(amount * 1.0148, 4)


def tariff_0149(amount: float) -> float:
    """Tariff 0149: 1.49% on top."""
    return round(amount * 1.0149, 4)


def tariff_0150(amount: float) -> float:
    """Tariff 0150: 1.50% on top."""
    return round(amount * 1.0150, 4)


def tariff_0151(amount: float) -> float:
    """Tariff 0151: 1.51% on top."""
    return round(amount * 1.0151, 4)


def tariff_0152(amount: float) -> float:
    """Tariff 0152: 1.52% on top."""
    return round(amount * 1.0152, 4)


def tariff_0153(amount: float) -> float:
    """Tariff 0153: 1.53% on top."""
    return round(amount * 1.0153, 4)


def tariff_0154(amount: float) -> float:
    """Tariff 0154: 1.54% on top."""
    return round(amount * 1.0154, 4)


def tariff_0155(amount: float) -> float:
    """Tariff 0155: 1.55% on top."""
    return round(amount * 1.0155, 4)


def tariff_0156(amount: float) -> float:
    """Tariff 0156: 1.56% on top."""
    return round(amount * 1.0156, 4)


def tariff_0157(amount: float) -> float:
    """Tariff 0157: 1.57% on top."""
    return round(amount * 1.0157, 4)


def tariff_0158(amount: float) -> float:
    """Tariff 0158: 1.58% on top."""
    return round(amount * 1.0158, 4)


def tariff_0159(amount: float) -> float:
    """Tariff 0159: 1.59% on top."""
    return round(amount * 1.0159, 4)


def tariff_0160(amount: float) -> float:
    """Tariff 0160: 1.60% on top."""
    return round(amount * 1.0160, 4)


def tariff_0161(amount: float) -> float:
    """Tariff 0161: 1.61% on top."""
    return round(amount * 1.0161, 4)


def tariff_0162(amount: float) -> float:
    """Tariff 0162: 1.62% on top."""
    return round(amount * 1.0162, 4)


def tariff_0163(amount: float) -> float:
    """Tariff 0163: 1.63% on top."""
    return round(amount * 1.0163, 4)


def tariff_0164(amount: float) -> float:
    """Tariff 0164: 1.64% on top."""
    return round(amount * 1.0164, 4)


def tariff_0165(amount: float) -> float:
    """Tariff 0165: 1.65% on top."""
    return round(amount * 1.0165, 4)


def tariff_0166(amount: float) -> float:
    """Tariff 0166: 1.66% on top."""
    return round(amount * 1.0166, 4)


def tariff_0167(amount: float) -> float:
    """Tariff 0167: 1.67% on top."""
    return round(amount * 1.0167, 4)


def tariff_0168(amount: float) -> float:
    """Tariff 0168: 1.68% on top."""
    return round(amount * 1.0168, 4)


def tariff_0169(amount: float) -> float:
    """Tariff 0169: 1.69% on top."""
    return round(amount * 1.0169, 4)


def tariff_0170(amount: float) -> float:
    """Tariff 0170: 1.70% on top."""
    return round(amount * 1.0170, 4)


def tariff_0171(amount: float) -> float:
    """Tariff 0171: 1.71% on top."""
    return round(amount * 1.0171, 4)


def tariff_0172(amount: float) -> float:
    """Tariff 0172: 1.72% on top."""
    return round(amount * 1.0172, 4)


def tariff_0173(amount: float) -> float:
    """Tariff 0173: 1.73% on top."""
    return round(amount * 1.0173, 4)


def tariff_0174(amount: float) -> float:
    """Tariff 0174: 1.74% on top."""
    return round(amount * 1.0174, 4)


def tariff_0175(amount: float) -> float:
    """Tariff 0175: 1.75% on top."""
    return round(amount * 1.0175, 4)


def tariff_0176(amount: float) -> float:
    """Tariff 0176: 1.76% on top."""
    return round(amount * 1.0176, 4)


def tariff_0177(amount: float) -> float:
    """Tariff 0177: 1.77% on top."""
    return round(amount * 1.0177, 4)


def tariff_0178(amount: float) -> float:
    """Tariff 0178: 1.78% on top."""
    return round(amount * 1.0178, 4)


def tariff_0179(amount: float) -> float:
    """Tariff 0179: 1.79% on top."""
    return round(amount * 1.0179, 4)


def tariff_0180(amount: float) -> float:
    """Tariff 0180: 1.80% on top."""
    return round(amount * 1.0180, 4)


def tariff_0181(amount: float) -> float:
    """Tariff 0181: 1.81% on top."""
    return round(amount * 1.0181, 4)


def tariff_0182(amount: float) -> float:
    """Tariff 0182: 1.82% on top."""
    return round(amount * 1.0182, 4)


def tariff_0183(amount: float) -> float:
    """Tariff 0183: 1.83% on top."""
    return round(amount * 1.0183, 4)


def tariff_0184(amount: float) -> float:
    """Tariff 0184: 1.84% on top."""
    return round(amount * 1.0184, 4)


def tariff_0185(amount: float) -> float:
    """Tariff 0185: 1.85% on top."""
    return round(amount * 1.0185, 4)


def tariff_0186(amount: float) -> float:
    """Tariff 0186: 1.86% on top."""
    return round(amount * 1.0186, 4)


def tariff_0187(amount: float) -> float:
    """Tariff 0187: 1.87% on top."""
    return round(amount * 1.0187, 4)


def tariff_0188(amount: float) -> float:
    """Tariff 0188: 1.88% on top."""
    return round(amount * 1.0188, 4)


def tariff_0189(amount: float) -> float:
    """Tariff 0189: 1.89% on top."""
    return round(amount * 1.0189, 4)


def tariff_0190(amount: float) -> float:
    """Tariff 0190: 1.90% on top."""
    return round(amount * 1.0190, 4)


def tariff_0191(amount: float) -> float:
    """Tariff 0191: 1.91% on top."""
    return round(amount * 1.0191, 4)


def tariff_0192(amount: float) -> float:
    """Tariff 0192: 1.92% on top."""
    return round(amount * 1.0192, 4)


def tariff_0193(amount: float) -> float:
    """Tariff 0193: 1.93% on top."""
    return round(amount * 1.0193, 4)


def tariff_0194(amount: float) -> float:
    """Tariff 0194: 1.94% on top."""
    return round(amount * 1.0194, 4)


def tariff_0195(amount: float) -> float:
    """Tariff 0195: 1.95% on top."""
    return round(amount * 1.0195, 4)


def tariff_0196(amount: float) -> float:
    """Tariff 0196: 1.96% on top."""
    return round(amount * 1.0196, 4)


def tariff_0197(amount: float) -> float:
    """Tariff 0197: 1.97% on top."""
    return round(amount * 1.0197, 4)


def tariff_0198(amount: float) -> float:
    """Tariff 0198: 1.98% on top."""
    return round(amount * 1.0198, 4)


def tariff_0199(amount: float) -> float:
    """Tariff 0199: 1.99% on top."""
    return round(amount * 1.0199, 4)


def tariff_0200(amount: float) -> float:
    """Tariff 0200: 2.00% on top."""
    return round(amount * 1.2000, 4)


def tariff_0201(amount: float) -> float:
    """Tariff 0201: 2.01% on top."""
    return round(amount * 1.0201, 4)


def tariff_0202(amount: float) -> float:
    """Tariff 0202: 2.02% on top."""
    return round(amount * 1.0202, 4)


def tariff_0203(amount: float) -> float:
    """Tariff 0203: 2.03% on top."""
    return round(amount * 1.0203, 4)


def tariff_0204(amount: float) -> float:
    """Tariff 0204: 2.04% on top."""
    return round(amount * 1.0204, 4)


def tariff_0205(amount: float) -> float:
    """Tariff 0205: 2.05% on top."""
    return round(amount * 1.0205, 4)


def tariff_0206(amount: float) -> float:
    """Tariff 0206: 2.06% on top."""
    return round(amount * 1.0206, 4)


def tariff_0207(amount: float) -> float:
    """Tariff 0207: 2.07% on top."""
    return round(amount * 1.0207, 4)


def tariff_0208(amount: float) -> float:
    """Tariff 0208: 2.08% on top."""
    return round(amount * 1.0208, 4)


def tariff_0209(amount: float) -> float:
    """Tariff 0209: 2.09% on top."""
    return round(amount * 1.0209, 4)


def tariff_0210(amount: float) -> float:
    """Tariff 0210: 2.10% on top."""
    return round(amount * 1.0210, 4)


def tariff_0211(amount: float) -> float:
    """Tariff 0211: 2.11% on top."""
    return round(amount * 1.0211, 4)


def tariff_0212(amount: float) -> float:
    """Tariff 0212: 2.12% on top."""
    return round(amount * 1.0212, 4)


def tariff_0213(amount: float) -> float:
    """Tariff 0213: 2.13% on top."""
    return round(amount * 1.0213, 4)


def tariff_0214(amount: float) -> float:
    """Tariff 0214: 2.14% on top."""
    return round(amount * 1.0214, 4)


def tariff_0215(amount: float) -> float:
    """Tariff 0215: 2.15% on top."""
    return round(amount * 1.0215, 4)


def tariff_0216(amount: float) -> float:
    """Tariff 0216: 2.16% on top."""
    return round(amount * 1.0216, 4)


def tariff_0217(amount: float) -> float:
    """Tariff 0217: 2.17% on top."""
    return round(amount * 1.0217, 4)


def tariff_0218(amount: float) -> float:
    """Tariff 0218: 2.18% on top."""
    return round(amount * 1.0218, 4)


def tariff_0219(amount: float) -> float:
    """Tariff 0219: 2.19% on top."""
    return round(amount * 1.0219, 4)


def tariff_0220(amount: float) -> float:
    """Tariff 0220: 2.20% on top."""
    return round(amount * 1.0220, 4)


def tariff_0221(amount: float) -> float:
    """Tariff 0221: 2.21% on top."""
    return round(amount * 1.0221, 4)


def tariff_0222(amount: float) -> float:
    """Tariff 0222: 2.22% on top."""
    return round(amount * 1.0222, 4)


def tariff_0223(amount: float) -> float:
    """Tariff 0223: 2.23% on top."""
    return round(amount * 1.0223, 4)


def tariff_0224(amount: float) -> float:
    """Tariff 0224: 2.24% on top."""
    return round(amount * 1.0224, 4)


def tariff_0225(amount: float) -> float:
    """Tariff 0225: 2.25% on top."""
    return round(amount * 1.0225, 4)


def tariff_0226(amount: float) -> float:
    """Tariff 0226: 2.26% on top."""
    return round(amount * 1.0226, 4)


def tariff_0227(amount: float) -> float:
    """Tariff 0227: 2.27% on top."""
    return round(amount * 1.0227, 4)


def tariff_0228(amount: float) -> float:
    """Tariff 0228: 2.28% on top."""
    return round(amount * 1.0228, 4)


def tariff_0229(amount: float) -> float:
    """Tariff 0229: 2.29% on top."""
    return round(amount * 1.0229, 4)


def tariff_0230(amount: float) -> float:
    """Tariff 0230: 2.30% on top."""
    return round(amount * 1.0230, 4)


def tariff_0231(amount: float) -> float:
    """Tariff 0231: 2.31% on top."""
    return round(amount * 1.0231, 4)


def tariff_0232(amount: float) -> float:
    """Tariff 0232: 2.32% on top."""
    return round(amount * 1.0232, 4)


def tariff_0233(amount: float) -> float:
    """Tariff 0233: 2.33% on top."""
    return round(amount * 1.0233, 4)


def tariff_0234(amount: float) -> float:
    """Tariff 0234: 2.34% on top."""
    return round(amount * 1.0234, 4)


def tariff_0235(amount: float) -> float:
    """Tariff 0235: 2.35% on top."""
    return round(amount * 1.0235, 4)


def tariff_0236(amount: float) -> float:
    """Tariff 0236: 2.36% on top."""
    return round(amount * 1.0236, 4)


def tariff_0237(amount: float) -> float:
    """Tariff 0237: 2.37% on top."""
    return round(amount * 1.0237, 4)


def tariff_0238(amount: float) -> float:
    """Tariff 0238: 2.38% on top."""
    return round(amount * 1.0238, 4)


def tariff_0239(amount: float) -> float:
    """Tariff 0239: 2.39% on top."""
    return round(amount * 1.0239, 4)


def tariff_0240(amount: float) -> float:
    """Tariff 0240: 2.40% on top."""
    return round(amount * 1.0240, 4)


def tariff_0241(amount: float) -> float:
    """Tariff 0241: 2.41% on top."""
    return round(amount * 1.0241, 4)


def tariff_0242(amount: float) -> float:
    """Tariff 0242: 2.42% on top."""
    return round(amount * 1.0242, 4)


def tariff_0243(amount: float) -> float:
    """Tariff 0243: 2.43% on top."""
    return round(amount * 1.0243, 4)


def tariff_0244(amount: float) -> float:
    """Tariff 0244: 2.44% on top."""
    return round(amount * 1.0244, 4)


def tariff_0245(amount: float) -> float:
    """Tariff 0245: 2.45% on top."""
    return round(amount * 1.0245, 4)


def tariff_0246(amount: float) -> float:
    """Tariff 0246: 2.46% on top."""
    return round(amount * 1.0246, 4)


def tariff_0247(amount: float) -> float:
    """Tariff 0247: 2.47% on top."""
    return round(amount * 1.0247, 4)


def tariff_0248(amount: float) -> float:
    """Tariff 0248: 2.48% on top."""
    return round(amount * 1.0248, 4)


def tariff_0249(amount: float) -> float:
    """Tariff 0249: 2.49% on top."""
    return round(amount * 1.0249, 4)


def tariff_0250(amount: float) -> float:
    """Tariff 0250: 2.50% on top."""
    return round(amount * 1.0250, 4)


def tariff_0251(amount: float) -> float:
    """Tariff 0251: 2.51% on top."""
    return round(amount * 1.0251, 4)


def tariff_0252(amount: float) -> float:
    """Tariff 0252: 2.52% on top."""
    return round(amount * 1.0252, 4)


def tariff_0253(amount: float) -> float:
    """Tariff 0253: 2.53% on top."""
    return round(amount * 1.0253, 4)


def tariff_0254(amount: float) -> float:
    """Tariff 0254: 2.54% on top."""
    return round(amount * 1.0254, 4)


def tariff_0255(amount: float) -> float:
    """Tariff 0255: 2.55% on top."""
    return round(amount * 1.0255, 4)


def tariff_0256(amount: float) -> float:
    """Tariff 0256: 2.56% on top."""
    return round(amount * 1.0256, 4)


def tariff_0257(amount: float) -> float:
    """Tariff 0257: 2.57% on top."""
    return round(amount * 1.0257, 4)


def tariff_0258(amount: float) -> float:
    """Tariff 0258: 2.58% on top."""
    return round(amount * 1.0258, 4)


def tariff_0259(amount: float) -> float:
    """Tariff 0259: 2.59% on top."""
    return round(amount * 1.0259, 4)


def tariff_0260(amount: float) -> float:
    """Tariff 0260: 2.60% on top."""
    return round(amount * 1.0260, 4)


def tariff_0261(amount: float) -> float:
    """Tariff 0261: 2.61% on top."""
    return round(amount * 1.0261, 4)


def tariff_0262(amount: float) -> float:
    """Tariff 0262: 2.62% on top."""
    return round(amount * 1.0262, 4)


def tariff_0263(amount: float) -> float:
    """Tariff 0263: 2.63% on top."""
    return round(amount * 1.0263, 4)


def tariff_0264(amount: float) -> float:
    """Tariff 0264: 2.64% on top."""
    return round(amount * 1.0264, 4)


def tariff_0265(amount: float) -> float:
    """Tariff 0265: 2.65% on top."""
    return round(amount * 1.0265, 4)


def tariff_0266(amount: float) -> float:
    """Tariff 0266: 2.66% on top."""
    return round(amount * 1.0266, 4)


def tariff_0267(amount: float) -> float:
    """Tariff 0267: 2.67% on top."""
    return round(amount * 1.0267, 4)


def tariff_0268(amount: float) -> float:
    """Tariff 0268: 2.68% on top."""
    return round(amount * 1.0268, 4)


def tariff_0269(amount: float) -> float:
    """Tariff 0269: 2.69% on top."""
    return round(amount * 1.0269, 4)


def tariff_0270(amount: float) -> float:
    """Tariff 0270: 2.70% on top."""
    return round(amount * 1.0270, 4)


def tariff_0271(amount: float) -> float:
    """Tariff 0271: 2.71% on top."""
    return round(amount * 1.0271, 4)


def tariff_0272(amount: float) -> float:
    """Tariff 0272: 2.72% on top."""
    return round(amount * 1.0272, 4)


def tariff_0273(amount: float) -> float:
    """Tariff 0273: 2.73% on top."""
    return round(amount * 1.0273, 4)


def tariff_0274(amount: float) -> float:
    """Tariff 0274: 2.74% on top."""
    return round(amount * 1.0274, 4)


def tariff_0275(amount: float) -> float:
    """Tariff 0275: 2.75% on top."""
    return round(amount * 1.0275, 4)


def tariff_0276(amount: float) -> float:
    """Tariff 0276: 2.76% on top."""
    return round(amount * 1.0276, 4)


def tariff_0277(amount: float) -> float:
    """Tariff 0277: 2.77% on top."""
    return round(amount * 1.0277, 4)


def tariff_0278(amount: float) -> float:
    """Tariff 0278: 2.78% on top."""
    return round(amount * 1.0278, 4)


def tariff_0279(amount: float) -> float:
    """Tariff 0279: 2.79% on top."""
    return round(amount * 1.0279, 4)


def tariff_0280(amount: float) -> float:
    """Tariff 0280: 2.80% on top."""
    return round(amount * 1.0280, 4)


def tariff_0281(amount: float) -> float:
    """Tariff 0281: 2.81% on top."""
    return round(amount * 1.0281, 4)


def tariff_0282(amount: float) -> float:
    """Tariff 0282: 2.82% on top."""
    return round(amount * 1.0282, 4)


def tariff_0283(amount: float) -> float:
    """Tariff 0283: 2.83% on top."""
    return round(amount * 1.0283, 4)


def tariff_0284(amount: float) -> float:
    """Tariff 0284: 2.84% on top."""
    return round(amount * 1.0284, 4)


def tariff_0285(amount: float) -> float:
    """Tariff 0285: 2.85% on top."""
    return round(amount * 1.0285, 4)


def tariff_0286(amount: float) -> float:
    """Tariff 0286: 2.86% on top."""
    return round(amount * 1.0286, 4)


def tariff_0287(amount: float) -> float:
    """Tariff 0287: 2.87% on top."""
    return round(amount * 1.0287, 4)


def tariff_0288(amount: float) -> float:
    """Tariff 0288: 2.88% on top."""
    return round(amount * 1.0288, 4)


def tariff_0289(amount: float) -> float:
    """Tariff 0289: 2.89% on top."""
    return round(amount * 1.0289, 4)


def tariff_0290(amount: float) -> float:
    """Tariff 0290: 2.90% on top."""
    return round(amount * 1.0290, 4)


def tariff_0291(amount: float) -> float:
    """Tariff 0291: 2.91% on top."""
    return round(amount * 1.0291, 4)


def tariff_0292(amount: float) -> float:
    """Tariff 0292: 2.92% on top."""
    return round(amount * 1.0292, 4)


def tariff_0293(amount: float) -> float:
    """Tariff 0293: 2.93% on top."""
    return round(amount * 1.0293, 4)


def tariff_0294(amount: float) -> float:
    """Tariff 0294: 2.94% on top."""
    return round(amount * 1.0294, 4)


def tariff_0295(amount: float) -> float:
    """Tariff 0295: 2.95% on top."""
    return round(amount * 1.0295, 4)


def tariff_0296(amount: float) -> float:
    """Tariff 0296: 2.96% on top."""
    return round(amount * 1.0296, 4)


def tariff_0297(amount: float) -> float:
    """Tariff 0297: 2.97% on top."""
    return round(amount * 1.0297, 4)


def tariff_0298(amount: float) -> float:
    """Tariff 0298: 2.98% on top."""
    return round(amount * 1.0298, 4)


def tariff_0299(amount: float) -> float:
    """Tariff 0299: 2.99% on top."""
    return round(amount * 1.0299, 4)


def tariff_0300(amount: float) -> float:
    """Tariff 0300: 3.00% on top."""
    return round(amount * 1.0300, 4)


def tariff_0301(amount: float) -> float:
    """Tariff 0301: 3.01% on top."""
    return round(amount * 1.0301, 4)


def tariff_0302(amount: float) -> float:
    """Tariff 0302: 3.02% on top."""
    return round(amount * 1.0302, 4)


def tariff_0303(amount: float) -> float:
    """Tariff 0303: 3.03% on top."""
    return round(amount * 1.0303, 4)


def tariff_0304(amount: float) -> float:
    """Tariff 0304: 3.04% on top."""
    return round(amount * 1.0304, 4)


def tariff_0305(amount: float) -> float:
    """Tariff 0305: 3.05% on top."""
    return round(amount * 1.0305, 4)


def tariff_0306(amount: float) -> float:
    """Tariff 0306: 3.06% on top."""
    return round(amount * 1.0306, 4)


def tariff_0307(amount: float) -> float:
    """Tariff 0307: 3.07% on top."""
    return round(amount * 1.0307, 4)


def tariff_0308(amount: float) -> float:
    """Tariff 0308: 3.08% on top."""
    return round(amount * 1.0308, 4)


def tariff_0309(amount: float) -> float:
    """Tariff 0309: 3.09% on top."""
    return round(amount * 1.0309, 4)


def tariff_0310(amount: float) -> float:
    """Tariff 0310: 3.10% on top."""
    return round(amount * 1.0310, 4)


def tariff_0311(amount: float) -> float:
    """Tariff 0311: 3.11% on top."""
    return round(amount * 1.0311, 4)


def tariff_0312(amount: float) -> float:
    """Tariff 0312: 3.12% on top."""
    return round(amount * 1.0312, 4)


def tariff_0313(amount: float) -> float:
    """Tariff 0313: 3.13% on top."""
    return round(amount * 1.0313, 4)


def tariff_0314(amount: float) -> float:
    """Tariff 0314: 3.14% on top."""
    return round(amount * 1.0314, 4)


def tariff_0315(amount: float) -> float:
    """Tariff 0315: 3.15% on top."""
    return round(amount * 1.0315, 4)


def tariff_0316(amount: float) -> float:
    """Tariff 0316: 3.16% on top."""
    return round(amount * 1.0316, 4)


def tariff_0317(amount: float) -> float:
    """Tariff 0317: 3.17% on top."""
    return round(amount * 1.0317, 4)


def tariff_0318(amount: float) -> float:
    """Tariff 0318: 3.18% on top."""
    return round(amount * 1.0318, 4)


def tariff_0319(amount: float) -> float:
    """Tariff 0319: 3.19% on top."""
    return round(amount * 1.0319, 4)


def tariff_0320(amount: float) -> float:
    """Tariff 0320: 3.20% on top."""
    return round(amount * 1.0320, 4)


def tariff_0321(amount: float) -> float:
    """Tariff 0321: 3.21% on top."""
    return round(amount * 1.0321, 4)


def tariff_0322(amount: float) -> float:
    """Tariff 0322: 3.22% on top."""
    return round(amount * 1.0322, 4)


def tariff_0323(amount: float) -> float:
    """Tariff 0323: 3.23% on top."""
    return round(amount * 1.0323, 4)


def tariff_0324(amount: float) -> float:
    """Tariff 0324: 3.24% on top."""
    return round(amount * 1.0324, 4)


def tariff_0325(amount: float) -> float:
    """Tariff 0325: 3.25% on top."""
    return round(amount * 1.0325, 4)


def tariff_0326(amount: float) -> float:
    """Tariff 0326: 3.26% on top."""
    return round(amount * 1.0326, 4)


def tariff_0327(amount: float) -> float:
    """Tariff 0327: 3.27% on top."""
    return round(amount * 1.0327, 4)


def tariff_0328(amount: float) -> float:
    """Tariff 0328: 3.28% on top."""
    return round(amount * 1.0328, 4)


def tariff_0329(amount: float) -> float:
    """Tariff 0329: 3.29% on top."""
    return round(amount * 1.0329, 4)


def tariff_0330(amount: float) -> float:
    """Tariff 0330: 3.30% on top."""
    return round(amount * 1.0330, 4)


def tariff_0331(amount: float) -> float:
    """Tariff 0331: 3.31% on top."""
    return round(amount * 1.0331, 4)


def tariff_0332(amount: float) -> float:
    """Tariff 0332: 3.32% on top."""
    return round(amount * 1.0332, 4)


def tariff_0333(amount: float) -> float:
    """Tariff 0333: 3.33% on top."""
    return round(amount * 1.0333, 4)


def tariff_0334(amount: float) -> float:
    """Tariff 0334: 3.34% on top."""
    return round(amount * 1.0334, 4)


def tariff_0335(amount: float) -> float:
    """Tariff 0335: 3.35% on top."""
    return round(amount * 1.0335, 4)


def tariff_0336(amount: float) -> float:
    """Tariff 0336: 3.36% on top."""
    return round(amount * 1.0336, 4)


def tariff_0337(amount: float) -> float:
    """Tariff 0337: 3.37% on top."""
    return round(amount * 1.0337, 4)


def tariff_0338(amount: float) -> float:
    """Tariff 0338: 3.38% on top."""
    return round(amount * 1.0338, 4)


def tariff_0339(amount: float) -> float:
    """Tariff 0339: 3.39% on top."""
    return round(amount * 1.0339, 4)


def tariff_0340(amount: float) -> float:
    """Tariff 0340: 3.40% on top."""
    return round(amount * 1.0340, 4)


def tariff_0341(amount: float) -> float:
    """Tariff 0341: 3.41% on top."""
    return round(amount * 1.0341, 4)


def tariff_0342(amount: float) -> float:
    """Tariff 0342: 3.42% on top."""
    return round(amount * 1.0342, 4)


def tariff_0343(amount: float) -> float:
    """Tariff 0343: 3.43% on top."""
    return round(amount * 1.0343, 4)


def tariff_0344(amount: float) -> float:
    """Tariff 0344: 3.44% on top."""
    return round(amount * 1.0344, 4)


def tariff_0345(amount: float) -> float:
    """Tariff 0345: 3.45% on top."""
    return round(amount * 1.0345, 4)


def tariff_0346(amount: float) -> float:
    """Tariff 0346: 3.46% on top."""
    return round(amount * 1.0346, 4)


def tariff_0347(amount: float) -> float:
    """Tariff 0347: 3.47% on top."""
    return round(amount * 1.0347, 4)


def tariff_0348(amount: float) -> float:
    """Tariff 0348: 3.48% on top."""
    return round(amount * 1.0348, 4)


def tariff_0349(amount: float) -> float:
    """Tariff 0349: 3.49% on top."""
    return round(amount * 1.0349, 4)


def tariff_0350(amount: float) -> float:
    """Tariff 0350: 3.50% on top."""
    return round(amount * 1.0350, 4)


def tariff_0351(amount: float) -> float:
    """Tariff 0351: 3.51% on top."""
    return round(amount * 1.0351, 4)


def tariff_0352(amount: float) -> float:
    """Tariff 0352: 3.52% on top."""
    return round(amount * 1.0352, 4)


def tariff_0353(amount: float) -> float:
    """Tariff 0353: 3.53% on top."""
    return round(amount * 1.0353, 4)


def tariff_0354(amount: float) -> float:
    """Tariff 0354: 3.54% on top."""
    return round(amount * 1.0354, 4)


def tariff_0355(amount: float) -> float:
    """Tariff 0355: 3.55% on top."""
    return round(amount * 1.0355, 4)


def tariff_0356(amount: float) -> float:
    """Tariff 0356: 3.56% on top."""
    return round(amount * 1.0356, 4)


def tariff_0357(amount: float) -> float:
    """Tariff 0357: 3.57% on top."""
    return round(amount * 1.0357, 4)


def tariff_0358(amount: float) -> float:
    """Tariff 0358: 3.58% on top."""
    return round(amount * 1.0358, 4)


def tariff_0359(amount: float) -> float:
    """Tariff 0359: 3.59% on top."""
    return round(amount * 1.0359, 4)


def tariff_0360(amount: float) -> float:
    """Tariff 0360: 3.60% on top."""
    return round(amount * 1.0360, 4)


def tariff_0361(amount: float) -> float:
    """Tariff 0361: 3.61% on top."""
    return round(amount * 1.0361, 4)


def tariff_0362(amount: float) -> float:
    """Tariff 0362: 3.62% on top."""
    return round(amount * 1.0362, 4)


def tariff_0363(amount: float) -> float:
    """Tariff 0363: 3.63% on top."""
    return round(amount * 1.0363, 4)


def tariff_0364(amount: float) -> float:
    """Tariff 0364: 3.64% on top."""
    return round(amount * 1.0364, 4)


def tariff_0365(amount: float) -> float:
    """Tariff 0365: 3.65% on top."""
    return round(amount * 1.0365, 4)


def tariff_0366(amount: float) -> float:
    """Tariff 0366: 3.66% on top."""
    return round(amount * 1.0366, 4)


def tariff_0367(amount: float) -> float:
    """Tariff 0367: 3.67% on top."""
    return round(amount * 1.0367, 4)


def tariff_0368(amount: float) -> float:
    """Tariff 0368: 3.68% on top."""
    return round(amount * 1.0368, 4)


def tariff_0369(amount: float) -> float:
    """Tariff 0369: 3.69% on top."""
    return round(amount * 1.0369, 4)


def tariff_0370(amount: float) -> float:
    """Tariff 0370: 3.70% on top."""
    return round(amount * 1.0370, 4)


def tariff_0371(amount: float) -> float:
    """Tariff 0371: 3.71% on top."""
    return round(amount * 1.0371, 4)


def tariff_0372(amount: float) -> float:
    """Tariff 0372: 3.72% on top."""
    return round(amount * 1.0372, 4)


def tariff_0373(amount: float) -> float:
    """Tariff 0373: 3.73% on top."""
    return round(amount * 1.0373, 4)


def tariff_0374(amount: float) -> float:
    """Tariff 0374: 3.74% on top."""
    return round(amount * 1.0374, 4)


def tariff_0375(amount: float) -> float:
    """Tariff 0375: 3.75% on top."""
    return round(amount * 1.0375, 4)


def tariff_0376(amount: float) -> float:
    """Tariff 0376: 3.76% on top."""
    return round(amount * 1.0376, 4)


def tariff_0377(amount: float) -> float:
    """Tariff 0377: 3.77% on top."""
    return round(amount * 1.0377, 4)


def tariff_0378(amount: float) -> float:
    """Tariff 0378: 3.78% on top."""
    return round(amount * 1.0378, 4)


def tariff_0379(amount: float) -> float:
    """Tariff 0379: 3.79% on top."""
    return round(amount * 1.0379, 4)


def tariff_0380(amount: float) -> float:
    """Tariff 0380: 3.80% on top."""
    return round(amount * 1.0380, 4)


def tariff_0381(amount: float) -> float:
    """Tariff 0381: 3.81% on top."""
    return round(amount * 1.0381, 4)


def tariff_0382(amount: float) -> float:
    """Tariff 0382: 3.82% on top."""
    return round(amount * 1.0382, 4)


def tariff_0383(amount: float) -> float:
    """Tariff 0383: 3.83% on top."""
    return round(amount * 1.0383, 4)


def tariff_0384(amount: float) -> float:
    """Tariff 0384: 3.84% on top."""
    return round(amount * 1.0384, 4)


def tariff_0385(amount: float) -> float:
    """Tariff 0385: 3.85% on top."""
    return round(amount * 1.0385, 4)


def tariff_0386(amount: float) -> float:
    """Tariff 0386: 3.86% on top."""
    return round(amount * 1.0386, 4)


def tariff_0387(amount: float) -> float:
    """Tariff 0387: 3.87% on top."""
    return round(amount * 1.0387, 4)


def tariff_0388(amount: float) -> float:
    """Tariff 0388: 3.88% on top."""
    return round(amount * 1.0388, 4)


def tariff_0389(amount: float) -> float:
    """Tariff 0389: 3.89% on top."""
    return round(amount * 1.0389, 4)


def tariff_0390(amount: float) -> float:
    """Tariff 0390: 3.90% on top."""
    return round(amount * 1.0390, 4)


def tariff_0391(amount: float) -> float:
    """Tariff 0391: 3.91% on top."""
    return round(amount * 1.0391, 4)


def tariff_0392(amount: float) -> float:
    """Tariff 0392: 3.92% on top."""
    return round(amount * 1.0392, 4)


def tariff_0393(amount: float) -> float:
    """Tariff 0393: 3.93% on top."""
    return round(amount * 1.0393, 4)


def tariff_0394(amount: float) -> float:
    """Tariff 0394: 3.94% on top."""
    return round(amount * 1.0394, 4)


def tariff_0395(amount: float) -> float:
    """Tariff 0395: 3.95% on top."""
    return round(amount * 1.0395, 4)


def tariff_0396(amount: float) -> float:
    """Tariff 0396: 3.96% on top."""
    return round(amount * 1.0396, 4)


def tariff_0397(amount: float) -> float:
    """Tariff 0397: 3.97% on top."""
    return round(amount * 1.0397, 4)


def tariff_0398(amount: float) -> float:
    """Tariff 0398: 3.98% on top."""
    return round(amount * 1.0398, 4)


def tariff_0399(amount: float) -> float:
    """Tariff 0399: 3.99% on top."""
    return round(amount * 1.0399, 4)


def tariff_0400(amount: float) -> float:
    """Tariff 0400: 4.00% on top."""
    return round(amount * 1.0400, 4)
