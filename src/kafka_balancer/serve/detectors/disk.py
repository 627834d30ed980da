"""A broker whose disk utilisation (load model) is above θ.

    >>> import numpy as np
    >>> [f.key for f in detect([1, 2], np.array([0.5, 0.9]), 0.8)]
    ['broker-2']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kafka_balancer.serve.anomaly import Finding

TYPE = "disk"


def detect(broker_ids: Sequence[int], disk_util: npt.NDArray[np.float64], theta: float) -> list[Finding]:
    """``disk_util``: B(j) of disk for the live brokers ``broker_ids``, in the same order."""
    return [Finding(TYPE, f"broker-{b}", {"broker": int(b), "disk_util": round(float(u), 4), "theta": theta})
            for b, u in zip(broker_ids, disk_util, strict=True) if u > theta + 1e-12]
