"""Errors that the CLI reports as one clear line (exit code 2) instead of a traceback."""

from askfirst.config import ConfigError
from askfirst.datasets.errors import DataError
from askfirst.lm.local_models import ModelNotFoundError
from askfirst.programs.askfirst.policy import PolicyError
from askfirst.programs.common.conversation import ConversationError
from askfirst.programs.registry import UnknownProgramError
from askfirst.retrieval.embedder import EmbedderError
from askfirst.retrieval.qdrant_store import StoreError
from askfirst.retrieval.safe_paths import UnsafePathError

USER_ERRORS = (ConfigError, DataError, ModelNotFoundError, ConversationError, UnknownProgramError, EmbedderError, StoreError,
               UnsafePathError, PolicyError, FileNotFoundError)
