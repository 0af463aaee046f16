"""Write access.log: a shop's traffic in nginx's combined format, 20 seconds of it, about 100
requests a second with a burst of 400 a second in seconds 8 to 10 (2,900 requests in all): 60 %
GET /items/ID, 30 % GET /search?q=WORD, 10 % POST /orders; and two lines that are not requests,
as real logs have. Seeded: the same log every time.

    python make_log.py [access.log]
"""

import random
import sys
from datetime import datetime, timedelta, timezone

START = datetime(2025, 3, 14, 9, 0, 0, tzinfo=timezone.utc)
SECONDS = 20
BURST = range(8, 11)
RATE, BURST_RATE = 100, 400
WORDS = ["apple", "banana", "cherry", "fig", "grape"]


def request(rng: random.Random) -> tuple[str, int, int]:
    """A request line, its status and its body's size."""
    r = rng.random()
    if r < 0.6:
        return f"GET /items/{rng.randint(1, 1000)} HTTP/1.1", 200, rng.randint(40, 60)
    if r < 0.9:
        return f"GET /search?q={rng.choice(WORDS)} HTTP/1.1", 200, rng.randint(200, 900)
    return "POST /orders HTTP/1.1", 201, 25


def main(path: str) -> None:
    rng = random.Random(57)
    with open(path, "w") as log:
        for second in range(SECONDS):
            stamp = (START + timedelta(seconds=second)).strftime("%d/%b/%Y:%H:%M:%S +0000")
            for _ in range(BURST_RATE if second in BURST else RATE):
                line, status, size = request(rng)
                ip = f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}"
                log.write(f'{ip} - - [{stamp}] "{line}" {status} {size} "-" "shop-client/1.0"\n')
            if second == 3:
                log.write(f'10.0.0.1 - - [{stamp}] "-" 400 0 "-" "-"\n')
                log.write("upstream timed out (110: Connection timed out) while reading\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "access.log")
