"""nbgrader's modules without its package's ``__init__`` until something asks the package itself.

nbgrader's ``__init__`` imports its four server extensions, hence jupyter_server, tornado's web
stack, nbconvert and bleach: about 0.7 s of CPU in every class command, which only needs
``nbgrader.api``, ``nbgrader.utils`` or ``nbgrader.coursedir`` (importing one took 0.8 s instead
of 1.5 s, ``tests/grading/runs/test_nbgrader_import.py`` measures it). The package is put in
``sys.modules`` with its path, so its submodules import as usual; the first attribute of the
package that is not a submodule (``__version__``, ``_jupyter_server_extension_points``…) runs
the real ``__init__`` then, in the same module object. A process where nbgrader is already
imported (nbgrader's own commands, JupyterLab, the formgrader) is left as it is.
"""

from __future__ import annotations

import importlib.util
import sys
import threading

__all__ = ["defer_package_init"]


def defer_package_init() -> None:
    """Make ``import nbgrader.<module>`` skip nbgrader's ``__init__`` in this process, until
    an attribute of the package itself is asked for."""
    if "nbgrader" in sys.modules:
        return
    spec = importlib.util.find_spec("nbgrader")
    if spec is None or spec.loader is None:  # not installed: the import fails as it would
        return
    package = importlib.util.module_from_spec(spec)
    lock = threading.RLock()  # the real __init__, run below, asks the package too
    ran = []

    def __getattr__(name: str) -> object:
        with lock:
            if ran or (name.startswith("__") and name != "__version__"):
                raise AttributeError(f"module 'nbgrader' has no attribute {name!r}")
            if importlib.util.find_spec(f"nbgrader.{name}") is not None:
                raise AttributeError(name)  # a submodule: the import system loads it next
            ran.append(name)
            spec.loader.exec_module(package)
        return getattr(package, name)

    package.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules["nbgrader"] = package
