"""The versions of system binaries a study's environment stores: each asked of the recipes of the
study that need the binary, through the recipe's own interface, under the keys stored before."""

from __future__ import annotations

import pytest

from wsgibench.servers import Binary, binary_versions, get

BANNERS = {"nginx": "1.22.1", "apache2": "2.4.62", "php-fpm": "8.2.26"}


@pytest.fixture(autouse=True)
def _banners(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every binary is found and says its version; no process starts."""
    monkeypatch.setattr(Binary, "path", lambda self: f"/usr/sbin/{self.name}")
    monkeypatch.setattr(Binary, "version", lambda self, flag="-v": BANNERS[self.name])


def test_each_recipe_gives_the_versions_of_its_binaries():
    assert get("nginx-baseline").binary_versions() == {"nginx_version": "1.22.1"}
    assert get("mod-wsgi").binary_versions() == {"apache_version": "2.4.62"}
    assert get("php-fpm-nginx").binary_versions() == {"nginx_version": "1.22.1"}
    assert get("bjoern").binary_versions() == {}


def test_a_study_stores_the_versions_of_the_binaries_its_servers_need():
    found = binary_versions(["nginx-baseline", "mod-wsgi", "gunicorn-sync"])
    assert found == {"nginx_version": "1.22.1", "apache_version": "2.4.62"}
    assert binary_versions(["bjoern", "waitress"]) == {}
