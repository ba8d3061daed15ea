"""The tasks of a config's question selection whose last user turn has two or more parts and asks for a fact: the
only ones ``askfirst.multipart_divergence`` can change (it decides whether divergence is asked of such a question;
divergence is not asked of the others). Printed as a YAML list for ``--set data.ids=…``, with the count per
answerability label on stderr (no LM). The program cuts its standalone rewrite, not the turn, so a follow-up whose
rewrite has another number of parts is missed.

    ASKFIRST_DATA_DIR=../shared/data python bench/multipart_tasks.py bench/askfirst_mtrag.yaml data.split=train data.limit=null
    … askfirst ablate bench/grids/askfirst_multipart_mtrag.yaml --set data.split=train --set data.limit=null \\
        --set "data.ids=$(python bench/multipart_tasks.py bench/askfirst_mtrag.yaml data.split=train data.limit=null)"
"""

from __future__ import annotations

import sys
from collections import Counter

from askfirst.config import config_path, load_config
from askfirst.datasets.splits import configured_questions
from askfirst.programs.askfirst.absent_terms import question_parts
from askfirst.programs.askfirst.question_form import question_form
from askfirst.programs.common.conversation import to_turns


def main(config: str, *overrides: str) -> None:
    examples = configured_questions(load_config(config_path(config), overrides=list(overrides)))
    picked = [e for e in examples if len(question_parts(q := to_turns(e.conversation)[-1].content)) >= 2 and question_form(q) == "fact"]
    labels = Counter(str(e.get("answerability")) for e in picked)
    print(f"{len(picked)} of {len(examples)} tasks: {dict(sorted(labels.items()))}", file=sys.stderr)
    print("[" + ", ".join(e.id for e in picked) + "]")


if __name__ == "__main__":
    main(*sys.argv[1:])
