"""Compile (prompt-optimise) the whole program, save it as DSPy state JSON, and load it back."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections import Counter
from pathlib import Path

import dspy

import askfirst
from askfirst.config import AskFirstConfig
from askfirst.datasets.errors import DataError
from askfirst.datasets.splits import split_by_conversation  # noqa: F401  (re-exported: callers split as compile does)
from askfirst.programs.askfirst.policy import POLICY_KEY
from askfirst.optimizers.checkpoint_signing import sign_checkpoints, verify_checkpoints
from askfirst.optimizers.demo_selection import interleaved_by_label
from askfirst.optimizers.factory import build_optimizer, mipro_proposer_options
from askfirst.optimizers.instruction_candidates import read_candidates
from askfirst.optimizers.objectives import build_objective
from askfirst.optimizers.program_state import demo_keys, read_program_state, read_route_policy
from askfirst.optimizers.rewrite_demos import rewrite_demo_search
from askfirst.run_dir import write_atomic

PROGRAM_FILE = "program.json"
CANDIDATES_SNAPSHOT = "instruction_candidates"  # the compile.instruction_candidates file as the run read it
SHIPPED = "askfirst:"  # program.compiled's prefix for a compiled program shipped in the package
SHIPPED_DIR = Path(askfirst.__file__).parent / "compiled"
logger = logging.getLogger(__name__)


def compile_program(program: dspy.Module, trainset: list, valset: list, *, config: AskFirstConfig, reflection_lm: dspy.LM,
                    run_dir: Path, judges=None, use_mlflow: bool = False) -> dspy.Module:
    """Optimise every predictor of ``program`` against ``compile.objective``; checkpoints go under ``run_dir``.

    Running again with the same ``run_dir`` resumes: GEPA reloads its state from ``run_dir/gepa``, and every
    LM call MIPROv2 (seeded, so it proposes the same candidates) already made is answered from the DSPy cache.

    Args:
        judges: An ``MTRAGJudges``, needed for the ``hm`` objective; the judges themselves are not optimised.
        use_mlflow: GEPA logs per-iteration scores into the active MLflow run.
    """
    if config.compile.optimizer == "policy":  # the route policy alone, fitted on every compile question's signals
        return _with_policy(program, trainset + valset, config=config, run_dir=run_dir)
    compiled = _optimised(program, trainset, valset, config=config, reflection_lm=reflection_lm, run_dir=run_dir, judges=judges,
                          use_mlflow=use_mlflow)
    if config.program.kind == "askfirst" and config.askfirst.policy == "fitted":  # refitted on the compiled prompts' signals
        compiled = _with_policy(compiled, trainset + valset, config=config, run_dir=run_dir)
    return compiled


def _optimised(program: dspy.Module, trainset: list, valset: list, *, config: AskFirstConfig, reflection_lm: dspy.LM, run_dir: Path,
               judges, use_mlflow: bool) -> dspy.Module:
    cfg = config.compile
    if cfg.optimizer == "rewrite_demos":  # no checkpoints: every LM call it made is answered from the DSPy cache on a rerun
        return rewrite_demo_search(config, program).compile(program, trainset=trainset, valset=valset)  # it picks the tasks it scores
    metric = build_objective(cfg.objective, recall_k=cfg.recall_k, judges=judges)
    trainset, valset = scored_by(metric, trainset, "trainset"), scored_by(metric, valset, "valset")
    candidates = None
    if cfg.instruction_candidates and cfg.optimizer == "miprov2":  # build_optimizer refuses them for another optimiser
        path = Path(cfg.instruction_candidates).expanduser()
        # Read before any LM call, so a bad file fails first; config.yaml only names it, so the run keeps what it said.
        candidates = read_candidates(path, [name for name, _ in program.named_predictors()])
        shutil.copyfile(path, run_dir / f"{CANDIDATES_SNAPSHOT}{path.suffix}")
    log_dir = run_dir / cfg.optimizer
    verify_checkpoints(log_dir)  # before the optimiser unpickles anything it finds there
    optimizer = build_optimizer(cfg, metric, reflection_lm=reflection_lm, log_dir=log_dir, seed=config.seed, use_mlflow=use_mlflow,
                                candidates=candidates)
    try:
        if cfg.optimizer == "bootstrap":
            compiled = optimizer.compile(program, trainset=interleaved_by_label(trainset) if cfg.demos_by_label else trainset)
            originals = dict(program.named_predictors())
            for name, predictor in compiled.named_predictors():  # its student copy dropped each step's own LM
                predictor.lm = originals[name].lm
            return compiled
        if cfg.optimizer == "miprov2":
            # MIPROv2 refuses a minibatch larger than the valset (its default is 35).
            extra = ({"minibatch_size": min(35, len(valset))} | mipro_proposer_options(cfg)
                     | ({} if cfg.auto else {"num_trials": cfg.num_trials or 5}))
            return optimizer.compile(program, trainset=trainset, valset=valset, **extra)
        return optimizer.compile(program, trainset=trainset, valset=valset)
    finally:  # finished or interrupted: what the optimiser wrote is what a resume may read
        sign_checkpoints(log_dir)


def _with_policy(program: dspy.Module, examples: list, *, config: AskFirstConfig, run_dir: Path) -> dspy.Module:
    """``program`` with its route policy fitted (``askfirst.policy=fitted``; ``compile.optimizer=policy``)."""
    from askfirst.optimizers.route_policy import fit_route_policy

    if config.program.kind != "askfirst" or config.askfirst.policy != "fitted":
        raise DataError("compile.optimizer=policy fits the askfirst program's route policy: set program.kind=askfirst and askfirst.policy=fitted")
    fit_route_policy(program, examples, run_dir=run_dir, seed=config.seed, threads=config.eval.threads)
    return program


def describe_training_set(config: AskFirstConfig, trainset: list, valset: list) -> dict:
    """What a compile saw, to ship beside its program: the question selection and every trainset and valset id
    (with their answerability), so a report can say which tasks a compiled program was never shown."""
    def side(examples: list) -> dict:
        labels = Counter(str(e.get("answerability")) for e in examples)
        return {"n": len(examples), "answerability": dict(sorted(labels.items())), "ids": [e.id for e in examples]}

    data, cfg = config.data, config.compile
    return {"questions": data.questions, "limit": data.limit, "per_label": data.per_label, "shuffle": data.shuffle, "seed": config.seed,
            "compile_split": cfg.split, "train_fraction": cfg.train_fraction, "objective": cfg.objective,
            "trainset": side(trainset), "valset": side(valset)}


def scored_by(metric, examples: list, what: str) -> list:
    """The examples ``metric`` applies to; a question it cannot score (recall without gold passages) would
    otherwise count as a success and inflate the optimisation score.

    Raises:
        DataError: None of them can be scored.
    """
    kept = [e for e in examples if metric.applies(e)]
    if len(kept) < len(examples):
        logger.warning("%s: %d of %d questions cannot be scored by %s and are left out", what, len(examples) - len(kept), len(examples), metric.name)
    if not kept:
        raise DataError(f"none of the {len(examples)} {what} questions can be scored by {metric.name} (no gold passages or readings)")
    return kept


def save_compiled(program: dspy.Module, run_dir: Path, *, steps: list[str] | None = None) -> Path:
    """Save the optimised instructions and demos as DSPy state JSON (never pickle) beside the run's config.yaml.

    Per-step LMs are left out: the config rebuilds them, and a saved llama.cpp engine would name a local
    class that DSPy (rightly) refuses to import from a file.

    Args:
        steps: The predictors to keep (``changed_steps``: the ones a compile changed), so the file names only what the
            compile changed and loads into the program with other stages switched off (an empty list saves no
            predictor). ``None`` keeps every predictor.
    """
    path = run_dir / PROGRAM_FILE
    lms = {name: predictor.lm for name, predictor in program.named_predictors()}
    for _, predictor in program.named_predictors():
        predictor.demos = [demo_fields(demo, predictor) for demo in predictor.demos]
    try:
        for _, predictor in program.named_predictors():
            predictor.lm = None
        program.save(str(path))
    finally:
        for name, predictor in program.named_predictors():
            predictor.lm = lms[name]
    policy = getattr(program, "route_policy", None)
    if steps is not None or policy is not None:
        state = json.loads(path.read_text(encoding="utf-8"))
        kept = {name: value for name, value in state.items() if name == "metadata" or steps is None or name in steps}
        if policy is not None:
            kept[POLICY_KEY] = policy.to_json()
        write_atomic(path, json.dumps(kept, indent=2, ensure_ascii=False) + "\n")
    return path


def changed_steps(program: dspy.Module, *, seed: dspy.Module) -> list[str]:
    """The names of ``program``'s predictors whose instruction or demos (as saved) are not ``seed``'s, in program order:
    the steps a compile changed, which ``save_compiled`` is told to keep."""
    before = {name: _prompt_state(p) for name, p in seed.named_predictors()}
    return [name for name, p in program.named_predictors() if before.get(name) != _prompt_state(p)]


def _prompt_state(predictor: dspy.Predict) -> tuple[str, list]:
    """What a compile may change in a step: its instruction and its demos (as saved)."""
    return predictor.signature.instructions, [dict(demo_fields(demo, predictor)) for demo in predictor.demos]


def demo_fields(demo, predictor: dspy.Predict):
    """A demonstration with only what a prompt shows and ``load_compiled`` accepts: its Signature's fields (a
    bootstrapped demo also holds the step's extras, such as the label's log-probabilities)."""
    allowed = demo_keys(predictor)
    keep = {k: v for k, v in demo.items() if k in allowed}
    return dspy.Example(**keep) if isinstance(demo, dspy.Example) else keep


def program_state_path(path: str | Path) -> Path:
    """The state JSON a path names (a compile run folder, the file itself, or ``askfirst:<name>``, a compiled program
    shipped in the package), checked before anything is loaded (so a bad file fails before any index or model work;
    ``load_compiled`` checks it against the program).

    Raises:
        DataError: Not a ``.json`` file (pickle is never loaded), missing, not an object of predictor states, or an
            ``askfirst:`` name the package does not ship.
    """
    if str(path).startswith(SHIPPED):
        name = str(path).removeprefix(SHIPPED)
        shipped = sorted(p.name for p in SHIPPED_DIR.glob("*") if (p / PROGRAM_FILE).is_file())
        if name not in shipped:
            raise DataError(f"{path}: the package ships no compiled program {name!r}; it ships: {', '.join(shipped) or 'none'}")
        path = SHIPPED_DIR / name
    path = Path(path)
    if not path.exists() and path.suffix in ("", ".json"):
        raise DataError(f"compiled program not found: {path} (a compile run folder, its {PROGRAM_FILE}, or askfirst:<name>)")
    if path.is_dir():
        path = path / PROGRAM_FILE
    if path.suffix != ".json":
        raise DataError(f"{path}: only DSPy state JSON is loaded (no pickle)")
    if not path.is_file():
        raise DataError(f"compiled program not found: {path}")
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a compiled program's state JSON ({exc})") from None
    if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
        raise DataError(f"{path}: a compiled program's state is a JSON object of predictor states")
    return path


def program_state_digest(path: str | Path) -> str:
    """The SHA-256 of the state JSON a path names: which compiled program a run used, even if the file changes later."""
    return hashlib.sha256(program_state_path(path).read_bytes()).hexdigest()


def load_compiled(program: dspy.Module, path: str | Path) -> dspy.Module:
    """Load compiled state (JSON) into a program built from the same config.

    Only instructions and demos are taken from the file, checked against the program's own predictors
    (``optimizers/program_state.py``); each step keeps the LM its config gave it, and a step the file does not name
    keeps its prompt.

    Raises:
        ProgramStateError: The file holds anything else, or does not fit the program.
    """
    path = program_state_path(path)
    states = read_program_state(path, program)
    policy = read_route_policy(path, program)
    if policy is not None:
        program.route_policy = policy
    for name, predictor in program.named_predictors():
        if name not in states:  # a step the compile did not change keeps its own prompt
            continue
        lm = predictor.lm
        predictor.load_state(states[name])
        predictor.lm = lm
    return program
