"""The routes a program's reply can take; every askfirst program maps its decision onto these."""

from typing import Literal

Route = Literal["answer", "partial", "clarify", "idk", "error"]
ROUTES: tuple[str, ...] = ("answer", "partial", "clarify", "idk")
ANSWERING_ROUTES: tuple[str, ...] = ("answer", "partial")  # the routes that answer, fully or in part

LABEL_TO_ROUTE = {"ANSWERABLE": "answer", "PARTIAL": "partial", "UNDERSPECIFIED": "clarify", "UNANSWERABLE": "idk"}
ROUTE_TO_LABEL = {v: k for k, v in LABEL_TO_ROUTE.items()}

IDK_MESSAGE = "I don't know. The documents I searched do not contain the information needed to answer this."
