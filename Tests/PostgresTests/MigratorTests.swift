import Digest
import Foundation
import Testing

@testable import Postgres

/// A throwaway migrations directory.
final class MigrationDirectory {
  let path: String

  init(_ files: [String: String]) throws {
    path = NSTemporaryDirectory() + "pg-migrations-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    for (name, sql) in files { try write(name, sql) }
  }

  func write(_ name: String, _ sql: String) throws {
    try Data(sql.utf8).write(to: URL(fileURLWithPath: path + "/" + name))
  }

  deinit {
    try? FileManager.default.removeItem(atPath: path)
  }
}

@Suite(.database) struct MigratorTests {
  static let files = [
    "0001_create_items.sql":
      "CREATE TABLE items (id int PRIMARY KEY);\nCREATE TABLE runs (name text);",
    "0002_seed.sql": "INSERT INTO items VALUES (1), (2);\nINSERT INTO runs VALUES ('0002');",
    "0010_add_label.sql":
      "ALTER TABLE items ADD COLUMN label text NOT NULL DEFAULT 'x';\nINSERT INTO runs VALUES ('0010');",
    "README.md": "not a migration",
  ]

  @Test func appliesInOrderRecordsChecksumsAndIsIdempotent() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let directory = try MigrationDirectory(Self.files)
      let migrator = Migrator(directory: directory.path, logger: TestDatabase.logger)
      #expect(
        try await migrator.pending(pool) == [
          "0001_create_items.sql", "0002_seed.sql", "0010_add_label.sql",
        ])
      #expect(
        try await migrator.migrate(pool) == [
          "0001_create_items.sql", "0002_seed.sql", "0010_add_label.sql",
        ])
      #expect(try await migrator.pending(pool) == [])
      #expect(try await migrator.migrate(pool) == [])
      let rows = try await pool.query(
        "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
      #expect(try rows.map { try $0.decode("version", as: Int.self) } == [1, 2, 10])
      #expect(
        try rows.first?.decode("checksum", as: String.self)
          == SHA256Digest.hex(Self.files["0001_create_items.sql", default: ""]))
      let label = try await pool.query("SELECT label FROM items WHERE id = 2")
      #expect(try label.first?.decode("label", as: String.self) == "x")
    }
  }

  @Test func aNewFileIsAppliedOnTheNextRun() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let directory = try MigrationDirectory(["0001_a.sql": "CREATE TABLE a (x int);"])
      let migrator = Migrator(directory: directory.path, logger: TestDatabase.logger)
      #expect(try await migrator.migrate(pool) == ["0001_a.sql"])
      try directory.write("0002_b.sql", "CREATE TABLE b (x int);")
      #expect(try await migrator.pending(pool) == ["0002_b.sql"])
      #expect(try await migrator.migrate(pool) == ["0002_b.sql"])
    }
  }

  @Test func twoInstancesMigratingAtOnceApplyEachFileOnce() async throws {
    try await withTestDatabase { db in
      let first = db.makePool()
      let second = db.makePool()
      defer {
        Task {
          await first.shutdown()
          await second.shutdown()
        }
      }
      let directory = try MigrationDirectory(Self.files)
      let migrator = Migrator(directory: directory.path, logger: TestDatabase.logger)
      async let a = migrator.migrate(first)
      async let b = migrator.migrate(second)
      let (appliedA, appliedB) = try await (a, b)
      #expect(
        (appliedA + appliedB).sorted() == [
          "0001_create_items.sql", "0002_seed.sql", "0010_add_label.sql",
        ])
      let runs = try await first.query("SELECT name FROM runs ORDER BY name")
      #expect(try runs.map { try $0.decode("name", as: String.self) } == ["0002", "0010"])
    }
  }

  @Test func anEditedAppliedFileStopsWithItsName() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let directory = try MigrationDirectory(Self.files)
      let migrator = Migrator(directory: directory.path, logger: TestDatabase.logger)
      try await migrator.migrate(pool)
      try directory.write("0002_seed.sql", "INSERT INTO items VALUES (3);")
      try directory.write("0011_later.sql", "CREATE TABLE later (x int);")
      for attempt in [migrator.migrate, migrator.pending] {
        let error = try await #require(throws: MigrationError.self) { try await attempt(pool) }
        guard case .checksumMismatch(let file) = error else {
          Issue.record("expected checksumMismatch, got \(error)")
          continue
        }
        #expect(file == "0002_seed.sql")
        #expect(error.description.contains("0002_seed.sql"))
      }
      // Nothing after the mismatch was applied.
      let later = try await pool.query("SELECT to_regclass('later') IS NULL AS absent")
      #expect(try later.first?.decode("absent", as: Bool.self) == true)
    }
  }

  @Test func aFailingFileIsRolledBackAndNamed() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let directory = try MigrationDirectory([
        "0001_ok.sql": "CREATE TABLE ok (x int);",
        "0002_broken.sql": "CREATE TABLE half (x int);\nINSERT INTO missing_table VALUES (1);",
      ])
      let migrator = Migrator(directory: directory.path, logger: TestDatabase.logger)
      let error = try await #require(throws: MigrationError.self) {
        try await migrator.migrate(pool)
      }
      guard case .failed(let file, let underlying) = error else {
        Issue.record("expected failed, got \(error)")
        return
      }
      #expect(file == "0002_broken.sql")
      #expect(underlying.sqlState == "42P01")
      #expect(try await migrator.pending(pool) == ["0002_broken.sql"])
      let half = try await pool.query("SELECT to_regclass('half') IS NULL AS absent")
      #expect(try half.first?.decode("absent", as: Bool.self) == true)
      // The advisory lock was released: another run can take it (and fails the same way).
      await #expect(throws: MigrationError.self) { try await migrator.migrate(pool) }
    }
  }

  @Test(arguments: ["1_short.sql", "0001-dash.sql", "00a1_x.sql", "0001_.sql", "0001_sp ace.sql"])
  func badFileNamesAreRejected(_ name: String) throws {
    let directory = try MigrationDirectory([name: "SELECT 1;"])
    #expect(throws: MigrationError.self) { try MigrationFile.load(directory: directory.path) }
  }

  @Test func aDuplicateVersionIsRejected() throws {
    let directory = try MigrationDirectory(["0001_a.sql": "SELECT 1;", "0001_b.sql": "SELECT 1;"])
    #expect(throws: MigrationError.self) { try MigrationFile.load(directory: directory.path) }
  }

  @Test func aMissingDirectoryIsUnreadable() {
    #expect(throws: MigrationError.self) {
      try MigrationFile.load(directory: "/nonexistent/migrations-\(UUID().uuidString)")
    }
  }
}
