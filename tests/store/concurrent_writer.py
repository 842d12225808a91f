"""One of several processes writing to one store at once (tests/store/test_concurrent.py).

usage: concurrent_writer.py DB GO_FILE open
       concurrent_writer.py DB GO_FILE runs CAMPAIGN_UID WORKER COUNT
Waits until GO_FILE exists (so that all writers start together), then opens the store (``open``), or
stores COUNT runs "w<WORKER>/duet/<i>" in the campaign, each in its own transaction (``runs``).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from duetbench.store.campaigns import CampaignStore
from duetbench.store.db import Store
from store_samples import run


def main() -> int:
    db, go, what = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    while not go.exists():
        time.sleep(0.001)
    store = Store(db)
    try:
        if what == "runs":
            uid, worker, count = sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
            campaigns = CampaignStore(store)
            record = campaigns.by_uid(uid)
            assert record is not None
            for i in range(count):
                campaigns.add_run(record.id, run(f"w{worker}/duet/{i}", worker * 1000 + i,
                                                 values=(worker + 1.0, i + 1.0, 0.5)))
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
