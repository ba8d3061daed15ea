"""Which packages the distribution holds; everything else about it is in pyproject.toml.

``askfirst/`` and the design card's top-level folders, each folder installed as ``askfirst.<folder>`` with every
sub-package in it, found rather than listed: adding a program is adding a package under ``programs/``.
"""

from setuptools import find_namespace_packages, setup

FOLDERS = ("programs", "signatures", "optimizers", "datasets", "retrieval")
SKIP = ["*__pycache__*", "*.egg-info"]

packages = find_namespace_packages(include=["askfirst", "askfirst.*"], exclude=SKIP)
for folder in FOLDERS:
    packages += [f"askfirst.{name}" for name in find_namespace_packages(include=[folder, f"{folder}.*"], exclude=SKIP)]

setup(packages=packages)
