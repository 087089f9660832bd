"""The Claude Desktop extension's manifest (packaging/mcpb/manifest.json) says what the code does: the tools it
lists are the ones the server offers by default, its version is pyproject's, and the environment it sets is read
by the configuration code into the settings a person chose. The official CLI validates the schema in .ci/run
(packaging/mcpb/build.sh); this checks the facts a schema cannot."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from server.runtime.config import PROJECT_ROOT, load_settings, user_config_dir
from server.tools import offered_tools
from server.toolsets import ALL_TOOLSETS

MANIFEST = json.loads((PROJECT_ROOT / "packaging" / "mcpb" / "manifest.json").read_text(encoding="utf-8"))
CONFIG = MANIFEST["server"]["mcp_config"]
PLATFORM_HOMES = {  # where `gmail-mcp-auth`, installed, writes the token on each platform (user_config_dir)
    "linux": CONFIG["env"]["GMAIL_MCP_HOME"],
    **{name: override["env"]["GMAIL_MCP_HOME"] for name, override in CONFIG["platform_overrides"].items()},
}


def substitute(text: str, home: Path, choices: dict[str, str]) -> str:
    """What Claude Desktop does to `${HOME}` and `${user_config.KEY}` before starting the server."""
    text = text.replace("${HOME}", str(home))
    return re.sub(r"\$\{user_config\.(\w+)\}", lambda match: choices[match.group(1)], text)


def test_the_listed_tools_are_the_ones_the_server_offers_by_default():
    offered = offered_tools(ALL_TOOLSETS, enabled=frozenset(), granted=None)
    assert [(tool["name"], tool["description"]) for tool in MANIFEST["tools"]] == [
        (spec.name, spec.title) for spec in offered.values()
    ]
    assert MANIFEST["tools_generated"] is any(toolset.opt_in for toolset in ALL_TOOLSETS)  # write groups add tools


def test_the_version_is_pyprojects():
    project = (PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8").split("[project]", 1)[1]
    (version,) = re.findall(r'^version = "([^"]+)"$', project.split("\n[", 1)[0], flags=re.MULTILINE)
    assert MANIFEST["version"] == version


def test_every_choice_is_used_and_every_use_is_a_choice():
    texts = [*CONFIG["args"], *CONFIG["env"].values()] + [
        value for override in CONFIG["platform_overrides"].values() for value in override.get("env", {}).values()
    ]
    used = {key for text in texts for key in re.findall(r"\$\{user_config\.(\w+)\}", text)}
    assert used == set(MANIFEST["user_config"])


def test_the_write_groups_offered_are_the_opt_in_toolsets():
    described = MANIFEST["user_config"]["write_tools"]["description"]
    named = set(re.search(r"separated by commas: ([a-z, ]+)\.", described).group(1).split(", "))
    assert named == {toolset.name for toolset in ALL_TOOLSETS if toolset.opt_in}
    assert MANIFEST["user_config"]["write_tools"]["default"] == ""  # read-only unless the person names a group


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_the_environment_becomes_the_settings_the_person_chose(platform: str, tmp_path: Path):
    env_block = CONFIG["platform_overrides"].get(platform, {}).get("env", CONFIG["env"])
    assert set(env_block) == set(CONFIG["env"])  # an override repeats the whole block, whatever the host merges
    credentials = tmp_path / "My Documents" / "client_secret_123.json"
    choices = {"credentials_file": str(credentials), "write_tools": "drafts, send"}
    env = {name: substitute(value, tmp_path, choices) for name, value in env_block.items()}
    settings = load_settings(env, dotenv=False)
    assert settings.credentials_path == credentials
    assert settings.write_tools == {"drafts", "send"}
    home = Path(substitute(PLATFORM_HOMES[platform], tmp_path, choices))
    assert settings.token_path == home.resolve() / ".token.json"
    assert load_settings({**env, "GMAIL_MCP_WRITE_TOOLS": ""}, dotenv=False).write_tools == frozenset()


def test_the_token_folder_is_where_the_installed_auth_command_writes_it_on_this_platform():
    import sys

    platform = sys.platform if sys.platform in PLATFORM_HOMES else "linux"
    assert Path(substitute(PLATFORM_HOMES[platform], Path.home(), {})) == user_config_dir({})
