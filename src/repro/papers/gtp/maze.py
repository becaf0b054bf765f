"""A 2-D point-mass maze with a distant goal, a sparse reward and an exactly known optimal return.

The long-horizon task of the gtp rebuild (spec: "our own 2-D point-mass maze with a distant goal and
sparse reward ... optimal return known by shortest path"). Layouts are D4RL ``maze2d``-style strings
(``#`` wall, ``.`` free, ``G`` the goal cell); each cell is ``cell`` units wide.

Dynamics (deterministic, vectorised over episodes): ``x' = x + step * clip(a, -1, 1)`` (each axis
moves at most ``step``); where that end point lies in the interior of the walls' union, the move
along x alone, else along y alone, is made (the mass slides along the wall), else it stays. (A first
version refused the whole move: two thirds of the behaviour transitions were then stuck against
walls and the learned dynamics barely moved.) Reward 1 on the step that ends in the closed goal cell, which
ends the episode; 0 otherwise. The return of an episode that reaches the goal after ``T`` steps is
``gamma ** (T - 1)``; 0 if it times out.

Exact optimum. With ``cell = m * step`` for an integer ``m``, every reachable path can be rounded to
a path of the lattice of spacing ``step`` with the same length: rounding moves each point by at most
``step / 2`` per axis, so consecutive rounded points differ by at most one lattice step per axis;
a point whose rounding lies in the walls' interior is itself in that interior (the open L-infinity
ball of radius ``step`` around an interior lattice point lies in the walls, since wall edges lie on
the lattice); the goal cell's corners are lattice points, so rounding keeps a goal point in the goal.
Every realised move ends at a free point within ``step`` per axis, so the rounding applies to it;
conversely every 8-neighbour lattice move between free points is one action (each axis -1, 0 or +1;
the full move is tried first). Hence the fewest
steps from a lattice start is the breadth-first distance on the 8-connected graph of free lattice
points (:func:`Maze.distances`), and the optimal return is ``gamma ** (T* - 1)``. The tests check
this against a brute-force search over a richer action set.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

__all__ = ["LAYOUTS", "Maze", "MazeEnv", "expert_actions"]

#: D4RL-style layouts; the goal is the ``G`` cell.
LAYOUTS = {
    "room": ["#####",
             "#...#",
             "#...#",
             "#..G#",
             "#####"],
    "umaze": ["#####",
              "#G..#",
              "###.#",
              "#...#",
              "#####"],
    "medium": ["##########",
               "#..#.....#",
               "#..#..#..#",
               "#.....##.#",
               "###.#....#",
               "#...#.##.#",
               "#.#.#..#G#",
               "#.#..#...#",
               "##########"],
    "large": ["############",
              "#....#.....#",
              "#.##.#.#.#.#",
              "#......#...#",
              "#.####.###.#",
              "#..#.#.....#",
              "##.#.#.#.###",
              "#..#...#..G#",
              "############"],
}


@dataclass(frozen=True)
class Maze:
    """A layout, the cell width and the step (``cell / step`` must be a whole number)."""

    layout: tuple[str, ...]
    cell: float = 1.0
    step: float = 0.25

    @classmethod
    def named(cls, name: str, **kw) -> "Maze":
        if name not in LAYOUTS:
            raise ValueError(f"maze layout {name!r} is unknown; choose one of {sorted(LAYOUTS)}")
        return cls(tuple(LAYOUTS[name]), **kw)

    def __post_init__(self):
        rows = {len(r) for r in self.layout}
        if len(rows) != 1:
            raise ValueError("maze layout: every row must have the same length")
        if sum(r.count("G") for r in self.layout) != 1:
            raise ValueError("maze layout: exactly one goal cell 'G' is needed")
        if set("".join(self.layout)) - set("#.G"):
            raise ValueError(f"maze layout: unknown symbols {set(''.join(self.layout)) - set('#.G')}")
        m = self.cell / self.step
        if self.step <= 0 or abs(m - round(m)) > 1e-9 or round(m) < 1:
            raise ValueError(f"maze: cell / step must be a positive whole number; got {self.cell} / {self.step}")

    # geometry ---------------------------------------------------------------------------------
    @property
    def m(self) -> int:
        return int(round(self.cell / self.step))

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols) of cells; row 0 is the top line of the layout, at the largest y."""
        return len(self.layout), len(self.layout[0])

    @property
    def extent(self) -> tuple[float, float]:
        rows, cols = self.shape
        return cols * self.cell, rows * self.cell

    def _wall_cells(self) -> np.ndarray:
        """(cols + 2, rows + 2) boolean wall grid indexed [i, j] = cell at x in [i, i+1), y in [j, j+1), padded by walls."""
        rows, cols = self.shape
        w = np.ones((cols + 2, rows + 2), dtype=bool)
        for r, line in enumerate(self.layout):
            for c, ch in enumerate(line):
                w[c + 1, rows - r] = ch == "#"  # padded index: +1
        return w

    @property
    def goal_cell(self) -> tuple[int, int]:
        rows, _ = self.shape
        for r, line in enumerate(self.layout):
            if "G" in line:
                return line.index("G"), rows - 1 - r
        raise AssertionError("unreachable: checked in __post_init__")

    def cell_box(self, cell: tuple[int, int]) -> np.ndarray:
        """[x0, y0, x1, y1] of the closed cell (i, j)."""
        i, j = cell
        return np.array([i, j, i + 1, j + 1], dtype=float) * self.cell

    def goal_box(self) -> np.ndarray:
        return self.cell_box(self.goal_cell)

    def free_cells(self) -> list[tuple[int, int]]:
        rows, _ = self.shape
        return [(c, rows - 1 - r) for r, line in enumerate(self.layout) for c, ch in enumerate(line) if ch != "#"]

    def blocked(self, xy: np.ndarray) -> np.ndarray:
        """True where a point lies in the interior of the union of wall cells (or outside the arena).

        A point is interior iff every cell whose closure contains it is a wall (1, 2 or 4 cells).
        """
        xy = np.asarray(xy, dtype=float)
        walls = self._wall_cells()
        u = xy / self.cell
        fl = np.floor(u + 1e-9)
        on_edge = np.abs(u - np.round(u)) < 1e-9  # on a cell boundary along that axis
        out = np.ones(xy.shape[:-1], dtype=bool)
        for dx in (0, -1):
            for dy in (0, -1):
                use = np.ones(xy.shape[:-1], dtype=bool)
                if dx == -1:
                    use &= on_edge[..., 0]
                if dy == -1:
                    use &= on_edge[..., 1]
                i = np.clip(fl[..., 0].astype(int) + dx + 1, 0, walls.shape[0] - 1)
                j = np.clip(fl[..., 1].astype(int) + dy + 1, 0, walls.shape[1] - 1)
                out &= ~use | walls[i, j]
        return out

    def in_goal(self, xy: np.ndarray) -> np.ndarray:
        return self.in_box(xy, self.goal_box())

    @staticmethod
    def in_box(xy: np.ndarray, box: np.ndarray) -> np.ndarray:
        x0, y0, x1, y1 = box
        xy = np.asarray(xy, dtype=float)
        tol = 1e-9
        return ((xy[..., 0] >= x0 - tol) & (xy[..., 0] <= x1 + tol) & (xy[..., 1] >= y0 - tol)
                & (xy[..., 1] <= y1 + tol))

    # exact optimum ----------------------------------------------------------------------------
    def lattice(self) -> np.ndarray:
        """(nx, ny, 2) coordinates of the lattice of spacing ``step``."""
        W, H = self.extent
        nx, ny = int(round(W / self.step)) + 1, int(round(H / self.step)) + 1
        gx, gy = np.meshgrid(np.arange(nx) * self.step, np.arange(ny) * self.step, indexing="ij")
        return np.stack([gx, gy], -1)

    def distances(self, cell: tuple[int, int] | None = None) -> np.ndarray:
        """Fewest steps from every lattice point to the goal (-1 if blocked or unreachable), (nx, ny).

        Breadth-first search from the goal lattice points over 8-neighbour moves between free points.
        ``cell`` (i, j) measures the distance to that cell instead of the goal cell.
        """
        pts = self.lattice()
        free = ~self.blocked(pts)
        dist = np.full(free.shape, -1, dtype=int)
        goal = (self.in_goal(pts) if cell is None else self.in_box(pts, self.cell_box(cell))) & free
        queue = deque(zip(*np.nonzero(goal)))
        dist[goal] = 0
        nx, ny = free.shape
        while queue:
            i, j = queue.popleft()
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    a, b = i + di, j + dj
                    if 0 <= a < nx and 0 <= b < ny and free[a, b] and dist[a, b] < 0:
                        dist[a, b] = dist[i, j] + 1
                        queue.append((a, b))
        return dist

    def optimal_steps(self, starts: np.ndarray) -> np.ndarray:
        """T* of lattice ``starts`` (n, 2); a start off the lattice is an error."""
        starts = np.asarray(starts, dtype=float).reshape(-1, 2)
        idx = starts / self.step
        if np.abs(idx - np.round(idx)).max(initial=0) > 1e-6:
            raise ValueError("optimal_steps: starts must lie on the lattice of spacing `step`")
        idx = np.round(idx).astype(int)
        d = self.distances()[idx[:, 0], idx[:, 1]]
        if (d < 0).any():
            raise ValueError("optimal_steps: a start is blocked or cannot reach the goal")
        return d

    def optimal_return(self, starts: np.ndarray, gamma: float) -> np.ndarray:
        return gamma ** (self.optimal_steps(starts) - 1.0)

    def starts_at_distance(self, lo: int, hi: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` lattice starts (with replacement) whose optimal step count lies in [lo, hi]."""
        pts, d = self.lattice(), self.distances()
        ok = np.argwhere((d >= lo) & (d <= hi))
        if len(ok) == 0:
            raise ValueError(f"maze: no free start with optimal distance in [{lo}, {hi}] (max {d.max()})")
        pick = ok[rng.integers(len(ok), size=n)]
        return pts[pick[:, 0], pick[:, 1]]

    def random_free_points(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` points uniform over the free area (rejection sampling)."""
        W, H = self.extent
        out = np.empty((0, 2))
        while len(out) < n:
            xy = rng.uniform([0, 0], [W, H], size=(2 * n + 16, 2))
            out = np.concatenate([out, xy[~self.blocked(xy)]])
        return out[:n]


def move(maze: Maze, xy: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """One deterministic step for many points: the full move; where its end point is in a wall, the
    move along x alone, then along y alone (sliding along the wall); else the point stays."""
    d = maze.step * np.clip(actions, -1.0, 1.0)
    out = np.asarray(xy, dtype=float).copy()
    todo = np.ones(out.shape[:-1], dtype=bool)
    for mask in (np.array([1.0, 1.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0])):
        cand = xy + d * mask
        ok = todo & ~maze.blocked(cand)
        out[ok] = cand[ok]
        todo &= ~ok
    return out


class MazeEnv:
    """Many episodes of one maze at once (numpy); finished episodes stay frozen."""

    def __init__(self, maze: Maze, gamma: float = 0.99):
        self.maze, self.gamma = maze, gamma

    def reset(self, starts: np.ndarray) -> np.ndarray:
        self.xy = np.asarray(starts, dtype=float).copy()
        if self.maze.blocked(self.xy).any():
            raise ValueError("MazeEnv.reset: a start lies inside a wall")
        self.done = self.maze.in_goal(self.xy)
        if self.done.any():
            raise ValueError("MazeEnv.reset: a start lies in the goal")
        self.t = 0
        self.steps = np.zeros(len(self.xy), dtype=int)
        self.ret = np.zeros(len(self.xy))
        return self.xy.copy()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        live = ~self.done
        nxt = move(self.maze, self.xy, actions)
        self.xy = np.where(live[:, None], nxt, self.xy)
        reached = live & self.maze.in_goal(self.xy)
        reward = reached.astype(float)
        self.ret += reward * self.gamma ** self.t
        self.steps += live
        self.done = self.done | reached
        self.t += 1
        return self.xy.copy(), reward, self.done.copy()


def expert_actions(maze: Maze, xy: np.ndarray, target_dist: np.ndarray | None = None) -> np.ndarray:
    """Greedy shortest-path actions from points near the lattice: the 8-neighbour move that lowers
    the BFS distance (to the goal, or to any target given as a lattice distance map) the most."""
    dist = maze.distances() if target_dist is None else target_dist
    nx, ny = dist.shape
    idx = np.clip(np.round(np.asarray(xy) / maze.step).astype(int), 0, [nx - 1, ny - 1])
    best = np.zeros((len(idx), 2))
    best_d = np.full(len(idx), np.inf)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            a, b = np.clip(idx[:, 0] + di, 0, nx - 1), np.clip(idx[:, 1] + dj, 0, ny - 1)
            d = dist[a, b].astype(float)
            d[d < 0] = np.inf
            better = d < best_d
            best_d = np.where(better, d, best_d)
            best[better] = (di, dj)
    # a point off the lattice first snaps towards its lattice point
    snap = (idx * maze.step - xy) / maze.step
    return np.clip(best + snap, -1.0, 1.0)
