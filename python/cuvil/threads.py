"""How many threads compiled code uses: cuvil.set_num_threads(n), else
$CUVIL_NUM_THREADS, else all cores. Part of the cache key (it changes code)."""
import os

_explicit = None


def set_num_threads(n: int) -> None:
    global _explicit
    if int(n) < 1:
        raise ValueError(f"number of threads must be >= 1, got {n}")
    _explicit = int(n)


def get_num_threads() -> int:
    if _explicit:
        return _explicit
    from .options import environment
    return environment().num_threads or available_cores()


def available_cores() -> int:
    """The cores this process may run on (taskset, cgroups), not the host's."""
    return len(os.sched_getaffinity(0))
