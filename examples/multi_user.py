"""The multi-user system of Ding et al. (seed 004): the paper's scales against the exact audit.

Users 1–3 of the paper's Table 2 report values 1..5; a fourth user joins with different
alternatives (two values, presence vs absence, two distributions, two Bernoullis). For each
case we print the paper's Laplace scale, the smallest scale that passes the exact audit, and the
realised ε of the paper's scale.

Run: ``python examples/multi_user.py``
"""

from __future__ import annotations

from pufferfish_pgm.standalone import multiuser as mu

# Table 2 of the paper: users 1-3, always present, value distributions over 1..5.
TABLE2 = [
    {1: 0.01, 2: 0.04, 3: 0.1, 4: 0.2, 5: 0.65},
    {1: 0.7, 2: 0.2, 3: 0.05, 4: 0.04, 5: 0.01},
    {1: 0.2, 2: 0.2, 3: 0.2, 4: 0.2, 5: 0.2},
]
# Table 3 of the paper: user 4's two candidate distributions.
P4 = {1: 0.4, 2: 0.1, 4: 0.1, 5: 0.4}
Q4 = {2: 0.05, 3: 0.9, 4: 0.05}


def cases(epsilon: float, rest: object) -> list[tuple[str, list, float]]:
    """(label, the user's alternatives, the paper's scale)."""
    return [
        ("Thm 1: reports 5 vs 3", [5, 3], mu.theorem1_scale(5, 3, epsilon)),
        ("Thm 2: reports 5 vs absent", [5, mu.ABSENT], mu.theorem2_scale(5, epsilon)),
        ("Thm 3 (14): P4 vs absent", [P4, mu.ABSENT], mu.theorem3_scale(P4, epsilon, "max")),
        ("Thm 3 (13): P4 vs absent", [P4, mu.ABSENT], mu.theorem3_scale(P4, epsilon, "brent")),
        ("Thm 4: P4 vs Q4", [P4, Q4], mu.theorem4_scale(P4, Q4, epsilon)),
        ("Lemma 5: B(.2) vs B(.9)", [{0: 0.8, 1: 0.2}, {0: 0.1, 1: 0.9}],
         mu.bernoulli_scale(epsilon)),
        ("Lemma 6: B(.2) vs B(.9)", [{0: 0.8, 1: 0.2}, {0: 0.1, 1: 0.9}],
         mu.bernoulli_relaxed_scale(0.2, 0.9, rest, epsilon)),
    ]


def main(epsilon: float = 1.0) -> list[tuple[str, float, float, float]]:
    rest = mu.sum_distribution([(1.0, d) for d in TABLE2])
    rows = []
    print(f"{'case':<28} {'paper':>8} {'exact':>8} {'realised eps of paper':>22}")
    for label, alternatives, paper in cases(epsilon, rest):
        exact = mu.exact_scale(alternatives, rest, epsilon)
        realised = mu.realised_epsilon(alternatives, rest, paper)
        rows.append((label, paper, exact, realised))
        print(f"{label:<28} {paper:8.4f} {exact:8.4f} {realised:22.4f}")
    return rows


if __name__ == "__main__":
    main()
