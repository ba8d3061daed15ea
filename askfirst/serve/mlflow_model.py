"""The compiled program as an MLflow pyfunc model, logged "from code" so nothing is pickled.

``mlflow models serve -m runs:/<run_id>/model --env-manager local`` loads this file, which rebuilds the
program from the logged ``config.yaml`` and loads the logged state JSON into it. Serve from the project
folder (the config's ``runs_dir`` is relative), so the existing index and LM cache are used.

Request rows have ``messages`` (a list of ``{role, content}`` turns) or ``question`` (one string);
each prediction is the record ``askfirst ask --json`` prints (route, answer, citations, ...).
"""

from __future__ import annotations

import mlflow
from mlflow.pyfunc import PythonModel


class AskFirstModel(PythonModel):
    def load_context(self, context) -> None:
        import logging
        from pathlib import Path

        from askfirst.config import config_path, load_config
        from askfirst.session import open_session
        from askfirst.trust import read_run_config

        # The logged config is untrusted (a model may come from anyone's registry): its models, endpoints, key variables
        # and paths are the operator's, from model_config={"config": FILE} or the defaults (askfirst.trust).
        own = (getattr(context, "model_config", None) or {}).get("config")
        operator = load_config(config_path(own) if own else None)
        config, warnings = read_run_config(Path(context.artifacts["config"]), operator, adopt=True)
        for line in warnings:
            logging.getLogger(__name__).warning(line)
        # The logged state is the whole compiled program; a program.compiled the compile started from names a file
        # of the machine it ran on, so the model loads its own copy instead.
        config.program.compiled = context.artifacts["program"]
        self.session = open_session(config)

    def predict(self, context, model_input, params=None) -> list[dict]:
        import dspy

        from askfirst.evaluation.runner import prediction_record
        from askfirst.programs.common.conversation import to_turns

        rows = model_input.to_dict(orient="records") if hasattr(model_input, "to_dict") else list(model_input)
        out = []
        for i, row in enumerate(rows):
            turns = row.get("messages") if row.get("messages") is not None else [{"role": "user", "content": row.get("question") or ""}]
            turns = [dict(t) for t in turns]
            to_turns(turns)  # a malformed row fails with a clear message before any LM call
            pred = self.session.program(conversation=turns)
            out.append(prediction_record(dspy.Example(id=str(row.get("id", i)), conversation=turns), pred, seconds=0.0, lm_calls=0))
        return out


mlflow.models.set_model(AskFirstModel())
