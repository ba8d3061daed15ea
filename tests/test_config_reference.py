"""The configuration reference page is generated from the config models and says in a sentence what each setting does."""

from pathlib import Path

from askfirst.config import AskFirstConfig
from askfirst.config_reference import _is_section, render

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "configuration.md"


def _settings():
    for key, field in AskFirstConfig.model_fields.items():
        section = _is_section(field.annotation)
        yield from ((f"{key}.{name}", f) for name, f in section.model_fields.items()) if section else [(key, field)]


def test_the_page_is_what_the_models_render():
    assert PAGE.read_text(encoding="utf-8") == render(), "regenerate it: askfirst config --reference > docs/reference/configuration.md"


def test_every_setting_is_on_the_page_with_a_short_description():
    page = render()
    for name, field in _settings():
        assert f"`{name}`" in page
        assert field.description, f"{name} has no description"
        assert len(field.description) <= 240, f"{name}: say what it does in a sentence; measurements go to the results page"
        assert "RESULTS" not in field.description, f"{name}: measurements go to the results page"
