"""``contextfold inspect``: a local page showing, call by call, what the model saw against the
full history (needs the ``serve`` extra: Starlette and uvicorn)."""

from contextfold.inspect.app import InspectServer, create_app, export_site
from contextfold.inspect.runs import Setup
from contextfold.inspect.sources import Catalog, collect

__all__ = ["Catalog", "InspectServer", "Setup", "collect", "create_app", "export_site"]
