"""askfirst: a DSPy program that answers over a document collection the way a careful advisor would."""

import os

# Nothing here may reach a model hub or a price list at run time: the machines this runs on are offline.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__version__ = "0.1.0"
