package devserver

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	persistencesql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives/timestamp"
	"go.temporal.io/server/common/resolver"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// schemaVersionKey names our row in the schema_version table; the plugin's
// DatabaseName is the file path, which changes when a data dir is moved.
const schemaVersionKey = "locus-devserver"

func sqliteConfig(dbPath string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: sqliteURIPath(dbPath),
		ConnectAttributes: map[string]string{
			"mode": "rwc",
			// WAL with synchronous=NORMAL never loses a committed transaction
			// when the process dies (kill -9); only an OS crash or power loss
			// can drop the last few. It saves most fsyncs of the default mode.
			"journal_mode": "wal",
			"synchronous":  "normal",
			// Another process reading the file (sqlite3 CLI) must not make the
			// server fail with SQLITE_BUSY.
			"busy_timeout": "10000",
		},
	}
}

// sqliteURIPath escapes the characters that end or escape the path part of
// the "file:" URI the plugin builds from DatabaseName.
func sqliteURIPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// prepareDB creates the schema in a new database and the namespace if it is
// missing. The schema goes in as one transaction, so a process killed during
// first start leaves an empty database that the next start sets up again.
func prepareDB(cfg *config.SQL, namespace string) error {
	db, err := persistencesql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer func() { _ = db.Close() }()

	tables, err := db.ListTables(cfg.DatabaseName)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	if len(tables) == 0 {
		if err := setupSchema(db); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	} else if err := checkSchemaVersion(db, tables); err != nil {
		return err
	}

	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, nil)
	if err != nil {
		return fmt.Errorf("namespace %q: %w", namespace, err)
	}
	ns.Detail.Config.Retention = timestamp.DurationPtr(NamespaceRetention)
	if err := sqliteschema.CreateNamespaces(cfg, ns); err != nil {
		return fmt.Errorf("create namespace %q: %w", namespace, err)
	}
	return nil
}

// setupSchema relies on the plugin's pool holding a single connection per
// database, so BEGIN, the schema and COMMIT all run on the same connection.
func setupSchema(db sqlplugin.AdminDB) (err error) {
	if err := db.Exec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = db.Exec("ROLLBACK")
		}
	}()
	if err := sqliteschema.SetupSchemaOnDB(db); err != nil {
		return err
	}
	if err := db.CreateSchemaVersionTables(); err != nil {
		return err
	}
	if err := db.UpdateSchemaVersion(schemaVersionKey, sqliteschema.Version, sqliteschema.Version); err != nil {
		return err
	}
	return db.Exec("COMMIT")
}

// checkSchemaVersion refuses a database written with another schema version:
// Temporal ships no SQLite migrations, and running on a mismatched schema
// fails later with obscure SQL errors.
func checkSchemaVersion(db sqlplugin.AdminDB, tables []string) error {
	hasVersionTable := false
	for _, t := range tables {
		if t == "schema_version" {
			hasVersionTable = true
		}
	}
	if !hasVersionTable {
		// Made by other tooling (e.g. `temporal server start-dev --db-filename`);
		// use it as is.
		return nil
	}
	v, err := db.ReadSchemaVersion(schemaVersionKey)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v != sqliteschema.Version {
		return fmt.Errorf("database has Temporal SQLite schema %s but this build of locus needs %s and cannot migrate it; "+
			"run the locus version that created it, or move the file aside to start empty (its workflow history is lost)", v, sqliteschema.Version)
	}
	return nil
}
