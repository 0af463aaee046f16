"""Which executables a recipe needs that this machine lacks."""

from __future__ import annotations

import shutil

from .servers import ServerRecipe
from .servers._nginx import nginx_binary
from .servers.php_fpm import php_fpm_binary

_FINDERS = {"nginx": nginx_binary, "php-fpm": php_fpm_binary}


def missing_binaries(recipe: ServerRecipe) -> list[str]:
    missing = []
    for exe in recipe.binaries:
        finder = _FINDERS.get(exe)
        found = finder() if finder else shutil.which(exe) or shutil.which(exe, path="/usr/sbin:/sbin")
        if not found:
            missing.append(exe)
    return missing
