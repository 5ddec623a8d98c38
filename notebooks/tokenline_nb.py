"""What the notebooks share: where the tokenline binary and the output folder are, running the binary
(every figure's caption shows the command that was run, as it was run), and checking a computed figure
against the seed article's printed one with the tolerances of tests/engine/model/ledger_golden_test.cpp.

Environment:
  TOKENLINE_BIN       the tokenline binary (default: build/tokenline, then build/cli/tokenline)
  TOKENLINE_NB_OUT    folder for the runs' outputs, one subfolder per notebook (default: build/notebooks)
  TOKENLINE_NB_JOBS   tokenline processes at once (default: the CPU count)
"""
import concurrent.futures
import json
import math
import os
import pathlib
import shlex
import subprocess

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd

REPO = pathlib.Path(__file__).resolve().parent.parent

# PNG outputs stay small enough to commit (a figure of 11 x 4 in is 880 x 320 px).
matplotlib.rcParams.update({'figure.dpi': 80, 'savefig.dpi': 80, 'font.size': 9, 'axes.grid': True,
                            'grid.alpha': 0.3, 'figure.constrained_layout.use': True})


def binary():
    """The tokenline binary: $TOKENLINE_BIN, else the build folder's."""
    env = os.environ.get('TOKENLINE_BIN')
    candidates = [pathlib.Path(env)] if env else [REPO / 'build' / 'tokenline', REPO / 'build' / 'cli' / 'tokenline']
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c.resolve()
    raise FileNotFoundError(f'tokenline binary not found (tried {", ".join(map(str, candidates))}); '
                            'build it (scripts/build.sh) or set TOKENLINE_BIN')


def jobs():
    return int(os.environ.get('TOKENLINE_NB_JOBS') or os.cpu_count() or 1)


class Tokenline:
    """Runs `tokenline` in this notebook's output folder with relative paths, so that the command shown in
    a caption is exactly the one that made the data (`tokenline` standing for the binary)."""

    def __init__(self, notebook):
        self.bin = binary()
        base = pathlib.Path(os.environ.get('TOKENLINE_NB_OUT') or REPO / 'build' / 'notebooks')
        self.dir = (base / notebook).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def shown(args):
        return 'tokenline ' + shlex.join(str(a) for a in args)

    def run(self, args, check=True):
        """Runs tokenline ARGS in the output folder; returns the CompletedProcess (text)."""
        p = subprocess.run([str(self.bin), *map(str, args)], cwd=self.dir, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError(f'{self.shown(args)} exited {p.returncode}:\n{p.stderr[-2000:]}')
        return p

    def json(self, args):
        return json.loads(self.run(args).stdout)

    def many_json(self, arg_lists):
        """JSON stdout of several commands, run jobs() at a time, in the order given."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs()) as pool:
            return list(pool.map(self.json, arg_lists))

    def path(self, *parts):
        return self.dir.joinpath(*parts)


def caption(fig, command, y=-0.01):
    """Writes the command that made a figure's data under it."""
    lines = [command] if isinstance(command, str) else list(command)
    text = '\n'.join('\\$ ' + line.replace('$', '\\$') for line in lines)  # '\\$': a dollar, not mathtext
    fig.text(0.005, y, text, fontsize=7, family='monospace', va='top', ha='left')


def rounds_to(value, shown, step):
    """True when `value` shows as `shown` once rounded to the seed's last printed digit (`step`)."""
    return abs(value - shown) <= step / 2 + 1e-9 * step


class SeedChecks:
    """The seed's printed figures beside the computed ones. Each check uses the golden test's tolerance:
    'rounds to' (half the seed's last printed digit), 'within x %' of the seed's figure (Catch2's
    Approx(seed).epsilon(x)), or 'within ± m' (Approx(seed).margin(m))."""

    def __init__(self):
        self.rows = []

    def _add(self, what, quote, seed, computed, unit, scale, ok, tolerance):
        self.rows.append({'figure': what, 'seed says': quote, 'seed': seed / scale,
                          'computed': computed / scale, 'unit': unit, 'tolerance': tolerance, 'ok': bool(ok)})
        return computed

    def rounds(self, what, quote, seed, computed, step, unit='', scale=1.0):
        return self._add(what, quote, seed, computed, unit, scale, rounds_to(computed, seed, step),
                         f'rounds to (± {step / 2 / scale:g} {unit})')

    def within(self, what, quote, seed, computed, rel, unit='', scale=1.0):
        return self._add(what, quote, seed, computed, unit, scale, abs(computed - seed) <= rel * abs(seed),
                         f'within {rel * 100:g} %')

    def margin(self, what, quote, seed, computed, margin, unit='', scale=1.0):
        return self._add(what, quote, seed, computed, unit, scale, abs(computed - seed) <= margin,
                         f'within ± {margin / scale:g} {unit}')

    def exact(self, what, quote, seed, computed, unit='', scale=1.0):
        return self._add(what, quote, seed, computed, unit, scale, computed == seed, 'exact')

    def frame(self):
        return pd.DataFrame(self.rows)

    def assert_all(self):
        bad = [r for r in self.rows if not r['ok']]
        assert not bad, 'seed figures not reproduced:\n' + '\n'.join(
            f"  {r['figure']}: seed {r['seed']:g} {r['unit']}, computed {r['computed']:g} ({r['tolerance']})"
            for r in bad)
        return f'{len(self.rows)} seed figures reproduced within the golden tests\' tolerances'


def mark_seed(ax, x, y, label, dx=8, dy=8, color='crimson'):
    """A seed figure on a plot: a hollow marker at (x, y) and its quote."""
    ax.plot([x], [y], 'o', mfc='none', mec=color, mew=1.5, ms=9, zorder=5)
    ax.annotate(label, (x, y), xytext=(dx, dy), textcoords='offset points', fontsize=7.5, color=color,
                bbox={'boxstyle': 'round,pad=0.15', 'fc': 'white', 'ec': 'none', 'alpha': 0.85})


def crossing(xs, a, b, log_x=False):
    """First x where series a - b changes sign, interpolated linearly in x (or in log x); None if it never
    does. Linear in x is exact where a and b are linear in x between the two points (the indexer's read per
    token against the context)."""
    for i in range(1, len(xs)):
        d0, d1 = a[i - 1] - b[i - 1], a[i] - b[i]
        if d0 == 0:
            return xs[i - 1]
        if d0 * d1 < 0:
            t = d0 / (d0 - d1)
            if log_x:
                return math.exp(math.log(xs[i - 1]) + t * (math.log(xs[i]) - math.log(xs[i - 1])))
            return xs[i - 1] + t * (xs[i] - xs[i - 1])
    return None


def show():
    plt.show()
