"""The Zero to JupyterHub values (classroom/z2jh/config.yaml) are ones the pinned chart accepts and
that run a class safely: validated against the chart's own schema (scripts/check_z2jh_values.py),
a released chart version named in the commands, HTTPS, a real authenticator with an allow-list,
and the image built from binder/. The image's layout is tested in tests/test_binder.py."""
from __future__ import annotations

import re
import urllib.parse

import pytest
import yaml

from scripts import check_z2jh_values as check

ROOT = check.ROOT
VALUES = yaml.safe_load(check.VALUES.read_text())


def test_the_values_validate_against_the_pinned_charts_schema():
    assert check.main([]) == 0, check.problems(VALUES)


@pytest.mark.parametrize("mistake, where", [
    ({"singleuser": {"memroy": {"limit": "2G"}}}, "singleuser: Additional properties are not allowed ('memroy'"),
    ({"proxy": {"https": {"enabled": "yes"}}}, "proxy.https.enabled: 'yes' is not of type"),
    ({"imagePullSecret": {"create": True}}, "imagePullSecret.password: None is not of type 'string'"),
])
def test_the_schema_check_names_a_misspelled_or_missing_setting(mistake, where):
    found = check.problems(check.merged(VALUES, mistake))
    assert any(problem.startswith(where) for problem in found), found


def test_a_null_removes_a_default_as_helm_does():
    assert check.merged({"a": {"b": 1, "c": 2}, "d": [1]}, {"a": {"b": None, "e": 3}, "d": [2]}) == {"a": {"c": 2, "e": 3}, "d": [2]}
    with pytest.raises(TypeError, match="values must be a mapping"):
        check.problems(["not", "values"])


def test_the_commands_install_the_released_chart_the_schema_belongs_to():
    assert (check.CHART / "values.schema.yaml").is_file() and (check.CHART / "values.yaml").is_file()
    assert check.CHART_VERSION in (check.CHART / "README.md").read_text()
    for path in (check.VALUES, ROOT / "classroom" / "z2jh" / "README.md", ROOT / "README.md"):
        text = path.read_text()
        assert "helm repo add jupyterhub https://hub.jupyter.org/helm-chart/" in text, path.name
        versions = set(re.findall(r"jupyterhub/jupyterhub --version (\S+)", text))
        assert versions == {check.CHART_VERSION}, f"{path.name} installs chart version {versions}, not {check.CHART_VERSION}"


def test_a_real_authenticator_with_an_allow_list_and_no_allow_all():
    config = VALUES["hub"]["config"]
    assert config["JupyterHub"]["authenticator_class"] not in ("dummy", "null", "shared-password")
    assert "allow_all" not in yaml.safe_dump(VALUES), "allow_all admits everyone the login provider knows"
    authenticator = config["GitHubOAuthenticator"]
    assert authenticator.get("allowed_users") or authenticator.get("allowed_organizations")
    assert authenticator["oauth_callback_url"].startswith("https://")
    assert "client_secret" not in authenticator, "keep the secret out of the file: --set it at install"


def test_https_comes_from_lets_encrypt_for_the_hubs_host():
    https = VALUES["proxy"]["https"]
    assert https["enabled"] is True and https["type"] == "letsencrypt"
    assert https["hosts"] and https["letsencrypt"]["contactEmail"]
    host = urllib.parse.urlparse(VALUES["hub"]["config"]["GitHubOAuthenticator"]["oauth_callback_url"]).hostname
    assert host in {name.lower() for name in https["hosts"]}, "the login callback must go to the host the certificate is for"


def test_the_image_is_pushed_from_binder_and_the_storage_class_is_stated():
    text = check.VALUES.read_text()
    assert re.search(r"jupyter-repo2docker .*--push", text.replace("\\\n", " ")), "say how the image gets to the registry"
    image = VALUES["singleuser"]["image"]
    assert image["name"].count("/") >= 1 and image["tag"] not in ("latest", "")
    # Each student's volume comes from the cluster's default StorageClass: the values say so.
    assert "storageClass" not in yaml.safe_dump(VALUES["singleuser"]["storage"]) and "default StorageClass" in text
