"""Alembic environment: runs on a connection the store hands over, or on a URL.

``cardaudit`` runs the migrations itself when it opens the store. Developers create a
revision with ``alembic -c src/cardaudit/store/alembic.ini revision --autogenerate -m ...``
(the URL comes from ``CARDAUDIT_DB`` or the default store).
"""

from __future__ import annotations

from alembic import context

from cardaudit.store.schema import Base

config = context.config
connection = config.attributes.get("connection")


def _run(conn) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=conn,
        target_metadata=Base.metadata,
        render_as_batch=conn.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


if connection is not None:
    _run(connection)
else:  # the alembic command line
    from cardaudit.store.engine import create_store_engine, resolve_url

    engine = create_store_engine(resolve_url(None))
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()
