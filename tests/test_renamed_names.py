"""Old names of issue 24's renames (one name per thing) still work for one release, deprecated.

Each old name resolves to the new thing itself and warns, blamed on the code that named it
(here, this file); the project's own code uses the new names (pyproject's filterwarnings
fails the suite otherwise).
"""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from selfpara.engines import embedded


def test_the_engines_packaged_module_is_the_embedded_one_under_its_old_names() -> None:
    from selfpara.engines import packaged

    with pytest.warns(DeprecationWarning, match=r"packaged\.LocalModel is deprecated; use .*embedded\.EmbeddedModel"):
        assert packaged.LocalModel is embedded.EmbeddedModel
    with pytest.warns(DeprecationWarning, match="EMBEDDED_MODELS") as caught:
        assert packaged.PACKAGED is embedded.EMBEDDED_MODELS
    assert caught[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="embedded_names"):
        assert packaged.packaged_names() == embedded.embedded_names()
    with pytest.warns(DeprecationWarning, match=r"packaged\.resolve is deprecated"):
        from selfpara.engines.packaged import resolve  # a name that kept its name: the same function
    assert resolve is embedded.resolve
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        packaged.nothing  # noqa: B018


@pytest.mark.parametrize("module", ["selfpara.engines.packaged", "selfpara.run"])
def test_importing_an_old_module_alone_does_not_warn(module: str) -> None:
    # only naming something in it does: importing it (or walking the package's modules) stays quiet
    sys.modules.pop(module, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.import_module(module)


def test_the_run_module_is_the_request_module_under_its_old_names() -> None:
    from selfpara import request, run

    with pytest.warns(
        DeprecationWarning, match=r"selfpara\.run\.Run is deprecated; use selfpara\.request\.RequestState"
    ):
        assert run.Run is request.RequestState
    with pytest.warns(DeprecationWarning, match="RequestOwner") as caught:
        assert run.RunOwner is request.RequestOwner
    assert caught[0].filename == __file__
    with pytest.warns(DeprecationWarning, match=r"selfpara\.run\.with_question is deprecated"):
        assert run.with_question is request.with_question
