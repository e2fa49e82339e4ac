"""What strategies that fold with a model share: the folder, its source, the fold cache."""

from contextfold.strategies.folding.cache import FoldCache, default_cache_path
from contextfold.strategies.folding.folder import Answer, Folder
from contextfold.strategies.folding.source import (
    NO_FOLDER,
    FolderConfig,
    FolderSource,
    OptionalFolderConfig,
)

__all__ = [
    "NO_FOLDER",
    "Answer",
    "FoldCache",
    "Folder",
    "FolderConfig",
    "FolderSource",
    "OptionalFolderConfig",
    "default_cache_path",
]
