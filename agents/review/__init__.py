"""Game review: any agent annotates a whole game (values, best moves, losses, marks).

:func:`~agents.review.reviewer.review_record` and
:func:`~agents.review.reviewer.review_game` do the work (:mod:`agents.review.reviewer`);
:mod:`agents.review.output` writes the JSON, the annotated record and the value
graph; :mod:`agents.review.steadiness` measures how steady and how right an
agent's value is along reviewed games; ``yinsh-review`` is :mod:`agents.review.review_cli`;
:func:`~agents.review.notebook_review.review` is the notebook's entry; the web app runs
reviews as bounded jobs (:mod:`agents.web.reviews`).
"""

from agents.review.notebook_review import review
from agents.review.output import annotated_text, plot_values, save_review
from agents.review.reviewer import (
    MARKS,
    Decision,
    Review,
    check_values,
    mark_of,
    review_game,
    review_record,
)

__all__ = [
    "MARKS",
    "Decision",
    "Review",
    "annotated_text",
    "check_values",
    "mark_of",
    "plot_values",
    "review",
    "review_game",
    "review_record",
    "save_review",
]
