"""askfirst: a DSPy program that answers over a document collection the way a careful advisor would."""

import os
from pathlib import Path

# Nothing here may reach a model hub or a price list at run time: the machines this runs on are offline.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__version__ = "0.1.0"

# The design card's top-level folders (datasets/, programs/, ...) are askfirst.datasets, askfirst.programs, ...
# They have no __init__.py, so from the repository root a bare `import datasets` still finds an installed
# package of that name (Hugging Face's) rather than our folder. A wheel holds them inside this package. In a
# source checkout (an editable install) they sit beside it, and setuptools' editable finder cannot map a folder
# without __init__.py into a regular package, so the checkout's root joins this package's search path instead.
_checkout = Path(__file__).resolve().parent.parent
if not (Path(__file__).parent / "datasets").is_dir() and (_checkout / "datasets" / "demo").is_dir():
    __path__.append(str(_checkout))  # noqa: F821 - a package's __path__ is set before its __init__ runs
