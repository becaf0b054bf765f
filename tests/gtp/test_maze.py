"""The maze's optimal return is exact: BFS on the step lattice equals a brute-force search of the env."""

from collections import deque

import numpy as np
import pytest

from repro.papers.gtp.maze import Maze, MazeEnv, expert_actions, move


def brute_force_steps(maze: Maze, start, max_steps: int) -> int:
    """Fewest env steps to the goal with the richer action set {-1, -1/2, 0, 1/2, 1}^2 (half-lattice states)."""
    acts = np.array([(a, b) for a in (-1, -0.5, 0, 0.5, 1) for b in (-1, -0.5, 0, 0.5, 1)])
    key = lambda p: tuple(np.round(p / (maze.step / 2)).astype(int))
    seen, queue = {key(start)}, deque([(np.asarray(start, float), 0)])
    while queue:
        p, d = queue.popleft()
        if d >= max_steps:
            continue
        for q in move(maze, np.repeat(p[None], len(acts), 0), acts):
            if maze.in_goal(q):
                return d + 1
            if key(q) not in seen:
                seen.add(key(q))
                queue.append((q, d + 1))
    return -1


@pytest.mark.parametrize("name", ["room", "umaze"])
def test_lattice_bfs_matches_brute_force_search(name):
    maze = Maze.named(name)
    starts = maze.starts_at_distance(1, 100, 6, np.random.default_rng(0))
    for s in starts:
        assert brute_force_steps(maze, s, 60) == maze.optimal_steps(s[None])[0]


def test_open_room_distance_is_chebyshev():
    # room: free cells x, y in [1, 4]; goal cell [3, 4] x [1, 2]; from (1, 4) the L-inf gap is (2, 2) cells
    maze = Maze.named("room")
    assert maze.optimal_steps(np.array([[1.0, 4.0]]))[0] == 2 * maze.m


def test_shortest_path_controller_attains_the_optimum():
    maze = Maze.named("large")
    starts = maze.starts_at_distance(30, 47, 20, np.random.default_rng(1))
    env = MazeEnv(maze, gamma=0.99)
    env.reset(starts)
    for _ in range(60):
        env.step(expert_actions(maze, env.xy))
    assert env.done.all()
    np.testing.assert_array_equal(env.steps, maze.optimal_steps(starts))
    np.testing.assert_allclose(env.ret, maze.optimal_return(starts, 0.99))


def test_walls_refuse_moves_and_seams_are_walls():
    maze = Maze.named("umaze")
    # the seam between two wall cells of the middle row (x = 1, y = 2.5) is inside the walls
    assert maze.blocked(np.array([[1.0, 2.5], [2.0, 2.5]])).all()
    assert not maze.blocked(np.array([[1.0, 1.0], [3.5, 2.5]])).any()
    xy = np.array([[1.5, 1.9]])
    assert np.allclose(move(maze, xy, np.array([[0.0, 1.0]])), xy)  # into the wall above: refused


def test_bad_layouts_are_refused():
    with pytest.raises(ValueError, match="goal"):
        Maze(("###", "#.#", "###"))
    with pytest.raises(ValueError, match="cell / step"):
        Maze.named("room", step=0.3)
    with pytest.raises(ValueError, match="unknown"):
        Maze.named("nope")
