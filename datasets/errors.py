"""The one error type for unusable input data; messages name the file (and line) at fault."""


class DataError(ValueError):
    """A corpus or question file that cannot be read as given."""
