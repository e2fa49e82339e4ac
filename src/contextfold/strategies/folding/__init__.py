"""What strategies that fold with a model share: the folder, its source, the fold cache."""

from contextfold.strategies.folding.cache import FoldCache, default_cache_path
from contextfold.strategies.folding.folder import Answer, Folder
from contextfold.strategies.folding.source import FolderConfig, FolderSource

__all__ = ["Answer", "FoldCache", "Folder", "FolderConfig", "FolderSource", "default_cache_path"]
