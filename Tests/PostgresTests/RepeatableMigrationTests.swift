import Foundation
import Testing

@testable import Postgres

/// `Migrations/repeatable/*.sql`: applied after the versioned files, again whenever their bytes
/// change, and never by a release older than the database.
@Suite(.database) struct RepeatableMigrationTests {
  static let versioned = [
    "0001_items.sql": "CREATE TABLE items (id int PRIMARY KEY);",
    "0002_more.sql": "INSERT INTO items VALUES (1), (2);",
  ]

  static func directory(
    _ versioned: [String: String] = versioned, repeatable: [String: String]
  ) throws -> MigrationDirectory {
    let directory = try MigrationDirectory(versioned)
    try FileManager.default.createDirectory(
      atPath: directory.path + "/repeatable", withIntermediateDirectories: true)
    for (name, sql) in repeatable { try directory.write("repeatable/" + name, sql) }
    return directory
  }

  static func countItems(_ body: String) -> String {
    "CREATE OR REPLACE FUNCTION item_count() RETURNS bigint LANGUAGE sql AS $$ \(body) $$;"
  }

  static func itemCount(_ pool: PostgresPool) async throws -> Int? {
    try await pool.query("SELECT item_count() AS n").first?.decode("n", as: Int.self)
  }

  @Test func appliedAfterTheVersionedFilesThenOnlyWhenChanged() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      // It reads a table the versioned files make: it must run after them.
      let directory = try Self.directory(repeatable: [
        "count.sql": Self.countItems("SELECT count(*) FROM items")
      ])
      let migrator = Migrator(directory: directory.path, logger: TestDatabase.logger)
      #expect(
        try await migrator.pending(pool) == [
          "0001_items.sql", "0002_more.sql", "repeatable/count.sql",
        ])
      #expect(
        try await migrator.migrate(pool) == [
          "0001_items.sql", "0002_more.sql", "repeatable/count.sql",
        ])
      #expect(try await Self.itemCount(pool) == 2)
      #expect(try await migrator.pending(pool) == [])
      #expect(try await migrator.migrate(pool) == [])

      try directory.write(
        "repeatable/count.sql", Self.countItems("SELECT count(*) * 10 FROM items"))
      #expect(try await migrator.pending(pool) == ["repeatable/count.sql"])
      #expect(try await migrator.migrate(pool) == ["repeatable/count.sql"])
      #expect(try await Self.itemCount(pool) == 20)
      let recorded = try await pool.query("SELECT name, release FROM schema_repeatables")
      #expect(try recorded.map { try $0.decode("name", as: String.self) } == ["count.sql"])
      #expect(try recorded.first?.decode("release", as: Int.self) == 2)
    }
  }

  @Test func anOlderReleaseLeavesTheNewerDefinitionsInPlace() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      var newerFiles = Self.versioned
      newerFiles["0003_newer.sql"] = "INSERT INTO items VALUES (3);"
      let newer = try Self.directory(
        newerFiles, repeatable: ["count.sql": Self.countItems("SELECT count(*) * 100 FROM items")])
      let older = try Self.directory(
        repeatable: ["count.sql": Self.countItems("SELECT count(*) FROM items")])
      try await Migrator(directory: older.path, logger: TestDatabase.logger).migrate(pool)
      #expect(try await Self.itemCount(pool) == 2)
      try await Migrator(directory: newer.path, logger: TestDatabase.logger).migrate(pool)
      #expect(try await Self.itemCount(pool) == 300)

      // An instance of the older release restarts during the rolling upgrade.
      let old = Migrator(directory: older.path, logger: TestDatabase.logger)
      #expect(try await old.pending(pool) == [])
      #expect(try await old.migrate(pool) == [])
      #expect(try await Self.itemCount(pool) == 300)
    }
  }

  @Test func aFailingDefinitionIsRolledBackAndNamed() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let directory = try Self.directory(repeatable: [
        "a_good.sql": Self.countItems("SELECT count(*) FROM items"),
        "b_broken.sql": "CREATE TABLE half (x int); SELECT * FROM missing_table;",
      ])
      let migrator = Migrator(directory: directory.path, logger: TestDatabase.logger)
      let error = try await #require(throws: MigrationError.self) {
        try await migrator.migrate(pool)
      }
      guard case .failed(let file, _) = error else {
        Issue.record("expected failed, got \(error)")
        return
      }
      #expect(file == "repeatable/b_broken.sql")
      #expect(try await migrator.pending(pool) == ["repeatable/b_broken.sql"])
      let half = try await pool.query("SELECT to_regclass('half') IS NULL AS absent")
      #expect(try half.first?.decode("absent", as: Bool.self) == true)
    }
  }

  @Test(arguments: ["Count.sql", "count me.sql", ".sql"])
  func badNamesAreRejected(_ name: String) throws {
    let directory = try Self.directory([:], repeatable: [name: "SELECT 1;"])
    #expect(throws: MigrationError.self) {
      try RepeatableFile.load(migrationsDirectory: directory.path)
    }
  }
}
