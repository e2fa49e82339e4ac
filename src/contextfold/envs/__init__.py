"""Environments for live runs."""

from contextfold.envs.files import FilesEnv

__all__ = ["FilesEnv"]
