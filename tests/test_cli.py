"""The `frontdesk` command: parses, forwards to operations, and reports plainly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from alembic import command
from alembic.config import Config
from click.testing import CliRunner, Result
from sqlalchemy import create_engine

from frontdesk.cli import operations
from frontdesk.cli.main import main
from frontdesk.config import Region, Settings
from frontdesk.errors import DatabaseNotReady
from frontdesk.store.database import MIGRATIONS

FIXTURE_FILE = Path(__file__).resolve().parent / "fixtures" / "companies.yaml"
MIGRATION_FILES = MIGRATIONS / "versions"


def fixture_keys() -> list[str]:
    """The tenant keys of the shared test companies, in file order."""
    document = yaml.safe_load(FIXTURE_FILE.read_text(encoding="utf-8"))
    return [company["tenant_key"] for company in document["companies"]]


@pytest.fixture(autouse=True)
def database(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every command in these tests works on a fresh SQLite file."""
    path = tmp_path / "cli.db"
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", f"sqlite+aiosqlite:///{path}")
    return path


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_apply_prints_each_companys_outcome() -> None:
    """`companies apply FILE` reports every company as created and exits 0."""
    result = run("companies", "apply", str(FIXTURE_FILE))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"{key}: created" for key in fixture_keys()]


def test_apply_twice_reports_every_company_unchanged() -> None:
    """The same file applied again reports nothing changed."""
    run("companies", "apply", str(FIXTURE_FILE))
    result = run("companies", "apply", str(FIXTURE_FILE))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{key}: unchanged" for key in fixture_keys()]


def test_apply_reports_an_edited_company_as_updated(tmp_path: Path) -> None:
    """A company whose definition changed is reported updated, the others unchanged."""
    path = write(tmp_path / "a.yaml", {"companies": [{"tenant_key": "a", "name": "A"}]})
    run("companies", "apply", str(path))
    write(
        path,
        {
            "companies": [
                {"tenant_key": "a", "name": "A, renamed"},
                {"tenant_key": "b", "name": "B"},
            ]
        },
    )
    result = run("companies", "apply", str(path))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["a: updated", "b: created"]


def test_apply_of_an_invalid_file_fails_naming_the_field(tmp_path: Path, database: Path) -> None:
    """An invalid file exits non-zero with the field path, and writes nothing at all."""
    sync_tool = {
        "name": "sync",
        "description": "Not async.",
        "provider": {"type": "python", "target": "tests.fixtures.tools:not_async"},
        "annotations": {
            "title": "Sync",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    }
    document = {
        "companies": [
            {"tenant_key": "good", "name": "Good"},
            {"tenant_key": "bad", "name": "Bad", "tools": [sync_tool]},
        ]
    }
    result = run("companies", "apply", str(write(tmp_path / "bad.yaml", document)))
    assert result.exit_code == 1
    assert "companies[1].tools[0].provider.target" in result.output
    assert "must be an async function" in result.output
    assert not database.exists()


def test_apply_of_a_missing_file_fails_plainly(tmp_path: Path) -> None:
    """A file that is not there is an error message, not a traceback."""
    result = run("companies", "apply", str(tmp_path / "absent.yaml"))
    assert result.exit_code == 1
    assert "cannot read" in result.output
    assert "Traceback" not in result.output


def test_list_shows_key_region_state_name_and_mcp_url() -> None:
    """`companies list` prints one tab-separated line per company, sorted by key."""
    run("companies", "apply", str(FIXTURE_FILE))
    result = run("companies", "list")
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert [line[0] for line in lines] == sorted(fixture_keys())
    rows = {line[0]: line[1:] for line in lines}
    assert rows["acme"] == ["eu", "active", "Acme Corp", "http://127.0.0.1:8000/v1/acme/mcp"]
    assert rows["dormant"][:2] == ["eu", "inactive"]
    assert rows["yankee"][:2] == ["us", "active"]


def test_list_builds_urls_from_the_configured_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP URLs listed use FRONTDESK_BASE_URL, the address clients connect to."""
    run("companies", "apply", str(FIXTURE_FILE))
    monkeypatch.setenv("FRONTDESK_BASE_URL", "https://eu.frontdesk.example")
    result = run("companies", "list")
    assert result.stdout.splitlines()[0].endswith("\thttps://eu.frontdesk.example/v1/acme/mcp")
    assert result.stderr == ""


def test_list_says_which_address_it_assumes_without_a_base_url() -> None:
    """`serve --port` advertises its own port, which `companies list` cannot know: without
    FRONTDESK_BASE_URL it says the URLs are on the default address, and how to change it."""
    run("companies", "apply", str(FIXTURE_FILE))
    result = run("companies", "list")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "warning: URLs on the default http://127.0.0.1:8000: set FRONTDESK_BASE_URL to the"
        " address the service advertises (e.g. http://127.0.0.1:9000 after serve --port 9000)"
    ]


def test_show_prints_the_stored_definition_as_json() -> None:
    """`companies show KEY` prints the company's definition as JSON."""
    run("companies", "apply", str(FIXTURE_FILE))
    result = run("companies", "show", "globex")
    assert result.exit_code == 0, result.output
    definition = orjson.loads(result.output)
    assert (definition["tenant_key"], definition["name"]) == ("globex", "Globex")
    assert [tool["name"] for tool in definition["tools"]] == ["echo"]


def test_show_of_an_unknown_key_fails() -> None:
    """Asking for a company nobody has is a usage error (exit 2) that says so."""
    run("db", "upgrade")
    result = run("companies", "show", "nobody")
    assert result.exit_code == 2
    assert "no company has the tenant key 'nobody'" in result.output


def test_db_upgrade_says_it_created_the_database_then_that_it_is_up_to_date(
    database: Path,
) -> None:
    """`db upgrade` creates and migrates a missing SQLite file and says so, naming each
    migration; run again, it says there was nothing to do."""
    first = run("db", "upgrade")
    assert first.exit_code == 0, first.output
    applied = [path.stem for path in sorted(MIGRATION_FILES.glob("[0-9]*.py"))]
    assert first.output == (
        f"created the database and applied {len(applied)} migrations: {', '.join(applied)}\n"
    )
    second = run("db", "upgrade")
    assert second.exit_code == 0, second.output
    assert second.output == "database is already up to date\n"
    assert database.is_file()


def test_db_upgrade_names_only_the_migrations_it_applied(database: Path) -> None:
    """A database one migration behind: that one migration, and no "created"."""
    assert run("db", "upgrade").exit_code == 0
    applied = [path.stem for path in sorted(MIGRATION_FILES.glob("[0-9]*.py"))]
    # Down to the migration before the newest, as a database an older Frontdesk left.
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = create_engine(f"sqlite:///{database}")
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "-1")
    engine.dispose()
    result = run("db", "upgrade")
    assert result.exit_code == 0, result.output
    assert result.output == f"applied 1 migration: {applied[-1]}\n"


class ServeRecorder:
    """Stands in for operations.serve: records what the command forwarded."""

    def __init__(self) -> None:
        self.calls: list[tuple[Settings, dict[str, Any]]] = []

    def __call__(self, settings: Settings, **options: Any) -> None:
        self.calls.append((settings, options))


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> ServeRecorder:
    recorder = ServeRecorder()
    monkeypatch.setattr(operations, "serve", recorder)
    return recorder


def test_serve_forwards_its_options(serve: ServeRecorder) -> None:
    """`serve` hands the parsed host, port and workers to operations.serve."""
    result = run("serve", "--host", "0.0.0.0", "--port", "9001", "--workers", "4")  # noqa: S104
    assert result.exit_code == 0, result.output
    [(_settings, options)] = serve.calls
    assert options == {"host": "0.0.0.0", "port": 9001, "workers": 4}  # noqa: S104


def test_serve_defaults_to_one_worker_on_loopback(serve: ServeRecorder) -> None:
    """Without options the service listens on 127.0.0.1:8000 with one worker."""
    assert run("serve").exit_code == 0
    [(_settings, options)] = serve.calls
    assert options == {"host": "127.0.0.1", "port": 8000, "workers": 1}


def test_serve_forwards_the_settings_from_the_environment(
    serve: ServeRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings handed to operations.serve are read from FRONTDESK_* variables."""
    monkeypatch.setenv("FRONTDESK_REGION", "us")
    monkeypatch.setenv("FRONTDESK_BASE_URL", "http://localhost:9000")
    assert run("serve").exit_code == 0
    [(settings, _options)] = serve.calls
    assert (settings.region, settings.base_url) == (Region.US, "http://localhost:9000")


@pytest.mark.parametrize("arguments", [["--port", "70000"], ["--port", "http"], ["--workers", "0"]])
def test_serve_refuses_bad_options_before_serving(
    serve: ServeRecorder, arguments: list[str]
) -> None:
    """An out-of-range port or worker count is a usage error; nothing is started."""
    result = run("serve", *arguments)
    assert result.exit_code == 2
    assert serve.calls == []


def test_serve_refuses_invalid_settings(
    serve: ServeRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bad FRONTDESK_* value stops the command with a message, before serving."""
    monkeypatch.setenv("FRONTDESK_BASE_URL", "ftp://eu.frontdesk.example")
    result = run("serve")
    assert result.exit_code == 1
    assert "invalid settings" in result.output
    assert "FRONTDESK_BASE_URL" in result.output
    assert serve.calls == []


def test_serve_reports_a_database_it_could_not_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed migration ends `serve` with a one-line error and exit code 1, no traceback."""

    def fail(_settings: Settings, **_options: Any) -> None:
        raise DatabaseNotReady("the database could not be migrated or seeded (exit code 1)")

    monkeypatch.setattr(operations, "serve", fail)
    result = run("serve")
    assert result.exit_code == 1
    assert result.output == "Error: the database could not be migrated or seeded (exit code 1)\n"


def test_serve_refuses_unsafe_production_settings(
    serve: ServeRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Production mode with the development key never reaches operations.serve."""
    monkeypatch.setenv("FRONTDESK_ENV", "production")
    result = run("serve")
    assert result.exit_code == 1
    assert "unsafe production settings" in result.output
    assert serve.calls == []


PRODUCTION_KEY = "a-production-secret-key-of-forty-characters"


@pytest.mark.parametrize(
    ("login", "reason"),
    [
        ({"type": "dev"}, "the dev login signs in anyone"),
        (
            {
                "type": "oidc",
                "issuer": "http://login.example",
                "client_id": "frontdesk",
                "client_secret_env": "LOGIN_SECRET",
            },
            "the identity provider's issuer must be https",
        ),
    ],
)
def test_production_refuses_to_apply_a_sign_in_not_fit_for_customers(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    login: dict[str, Any],
    reason: str,
    database: Path,
) -> None:
    """In production a companies file with the dev login or an http issuer applies nothing."""
    monkeypatch.setenv("FRONTDESK_ENV", "production")
    monkeypatch.setenv("FRONTDESK_BASE_URL", "https://eu.frontdesk.example")
    monkeypatch.setenv("FRONTDESK_SECRET_KEYS", PRODUCTION_KEY)
    monkeypatch.setenv("FRONTDESK_DATA_KEYS", PRODUCTION_KEY)
    company = {"tenant_key": "shop", "name": "Shop", "region": "eu", "signin": {"login": login}}
    result = run("companies", "apply", str(write(tmp_path / "c.yaml", {"companies": [company]})))
    assert result.exit_code == 1
    assert "not for production: shop: " + reason in result.output
    assert not database.exists()
