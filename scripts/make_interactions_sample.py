"""Write the small interaction logs bundled with polars_irmetrics (synthetic).

    python scripts/make_interactions_sample.py            # -> src/polars_irmetrics/data/
    python scripts/make_interactions_sample.py --out DIR

Deterministic (numpy ``default_rng(SEED)``, no network): running it twice gives
byte-identical files.

* ``interactions.parquet``: an A/B test's impression log. 600 users, split 50/50 at
  random into arms ``A`` (control) and ``B``; each user has 1-4 sessions of 10
  impressions (positions 1..10). Columns: ``arm``, ``user_id``, ``session_id``,
  ``day`` (``2026-03-02`` or ``2026-03-03``), ``device`` (``mobile``/``desktop``),
  ``position``, ``item_id``, ``clicked``, ``dwell`` (seconds, null without a click),
  ``converted``, ``timestamp`` (the display time; a clicked row holds its click time).
  A click happens with probability ``examine(position) * attractiveness``
  (``examine = 0.9 / position ** 0.9``); arm B ranks better (attractiveness
  0.38 against 0.30, longer dwell), so its CTR is higher and its abandonment lower.
* ``interleaving.parquet``: a team-draft interleaving log of two systems, ``bm25`` and
  ``dense``: 300 sessions of 10 impressions, each with the ``team`` that contributed it;
  ``dense`` items are clicked more (attractiveness 0.30 against 0.22). Columns:
  ``session_id``, ``position``, ``item_id``, ``team``, ``clicked``.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

import numpy as np
import polars as pl

SEED = 20261125
USERS = 600
POSITIONS = 10
DATA = Path(__file__).resolve().parent.parent / "src" / "polars_irmetrics" / "data"


def _examine(position: np.ndarray) -> np.ndarray:
    return 0.9 / position.astype(np.float64) ** 0.9


def ab_log(rng: np.random.Generator) -> pl.DataFrame:
    users = np.array([f"u{u:04d}" for u in range(1, USERS + 1)])
    arms = np.where(rng.random(USERS) < 0.5, "A", "B")
    devices = np.where(rng.random(USERS) < 0.6, "mobile", "desktop")
    sessions_per_user = rng.integers(1, 5, USERS)
    user_of_session = np.repeat(np.arange(USERS), sessions_per_user)
    n_sessions = len(user_of_session)
    session_ids = np.array([f"s{s:05d}" for s in range(1, n_sessions + 1)])
    day = rng.integers(0, 2, n_sessions)
    start = dt.datetime(2026, 3, 2, 8, 0, 0)
    start_s = day * 86400 + rng.integers(0, 12 * 3600, n_sessions)

    rows = n_sessions * POSITIONS
    session = np.repeat(np.arange(n_sessions), POSITIONS)
    user = user_of_session[session]
    arm = arms[user]
    position = np.tile(np.arange(1, POSITIONS + 1), n_sessions)
    attract = np.where(arm == "B", 0.38, 0.30)
    clicked = rng.random(rows) < _examine(position) * attract
    mean_dwell = np.where(arm == "B", 45.0, 38.0)
    dwell = np.where(clicked, np.round(rng.exponential(mean_dwell), 1), np.nan)
    converted = clicked & (dwell >= 60) & (rng.random(rows) < 0.25)
    # a click happens a few seconds after the page is shown, later further down
    click_delay = np.round(position * 2.0 + rng.exponential(5.0, rows), 1)
    seconds = start_s[session] + np.where(clicked, click_delay, 0.0)
    timestamp = [start + dt.timedelta(seconds=float(s)) for s in seconds]
    return pl.DataFrame(
        {
            "arm": arm,
            "user_id": users[user],
            "session_id": session_ids[session],
            "day": [f"2026-03-0{2 + d}" for d in day[session]],
            "device": devices[user],
            "position": position.astype(np.int64),
            "item_id": [f"i{i:04d}" for i in rng.integers(0, 2000, rows)],
            "clicked": clicked,
            "dwell": dwell,
            "converted": converted,
            "timestamp": timestamp,
        },
        schema_overrides={"timestamp": pl.Datetime("us")},
    ).with_columns(pl.col("dwell").fill_nan(None))


def interleaving_log(rng: np.random.Generator) -> pl.DataFrame:
    sessions = 300
    rows = sessions * POSITIONS
    session = np.repeat(np.arange(sessions), POSITIONS)
    position = np.tile(np.arange(1, POSITIONS + 1), sessions)
    # team draft: in each round of two picks a coin decides which team picks first
    first = rng.random((sessions, POSITIONS // 2)) < 0.5
    pair = np.stack([first, ~first], axis=2).reshape(sessions, POSITIONS)
    team = np.where(pair.reshape(-1), "bm25", "dense")
    attract = np.where(team == "dense", 0.30, 0.22)
    clicked = rng.random(rows) < _examine(position) * attract
    return pl.DataFrame(
        {
            "session_id": [f"q{s:04d}" for s in session + 1],
            "position": position.astype(np.int64),
            "item_id": [f"i{i:04d}" for i in rng.integers(0, 2000, rows)],
            "team": team,
            "clicked": clicked,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA, help="output folder")
    out: Path = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    ab_log(rng).write_parquet(out / "interactions.parquet", statistics=False)
    interleaving_log(rng).write_parquet(out / "interleaving.parquet", statistics=False)
    for name in ("interactions.parquet", "interleaving.parquet"):
        print(f"wrote {out / name} ({(out / name).stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
