"""Two variants in one process: one keeps to a few MB, the other asks for more memory than its cell may have
(tests/test_e2e_faults.py gives the cell a 700 MB limit): the kernel's OOM killer ends its worker."""
from suite.api import UserBenchmark


class Eater(UserBenchmark):
    name = "memory.eater"
    title = "a variant that runs out of memory beside one that does not"
    params = {"appetite_mb": [4, 3000]}

    def setup(self, p, env):
        held = []

        def step():
            if not held:
                held.append(bytearray(p["appetite_mb"] * 2**20))    # touched, so it is resident
                for i in range(0, len(held[0]), 4096):
                    held[0][i] = 1
            return len(held[0])

        return step


BENCHMARKS = [Eater()]
