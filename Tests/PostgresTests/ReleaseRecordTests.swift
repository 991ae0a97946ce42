import Foundation
import Testing

@testable import Postgres

/// Builds are ordered by their latest versioned migration alone (`Migrator.due`): two builds
/// of one release with different definitions would each take the other's for older, so an
/// instance of the previous release would report the new ones pending and put its own back.
/// `Migrations/RELEASES` records the definitions each release shipped; this release's must be
/// the ones here.
@Suite struct ReleaseRecordTests {
  static let migrations = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Migrations").path

  /// `release -> file -> checksum`, from the record's lines (`NNNN sha256 name`).
  static func recorded() throws -> [Int: [String: String]] {
    let text = try String(contentsOfFile: migrations + "/RELEASES", encoding: .utf8)
    var releases: [Int: [String: String]] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
      let fields = line.split(separator: " ")
      #expect(fields.count == 3, "\(line)")
      guard fields.count == 3, let release = Int(fields[0]) else { continue }
      releases[release, default: [:]][String(fields[2])] = String(fields[1])
    }
    return releases
  }

  @Test func thisReleaseShipsTheDefinitionsRecordedForIt() throws {
    let release = Migrator.release(try MigrationFile.load(directory: Self.migrations))
    let files = try RepeatableFile.load(migrationsDirectory: Self.migrations)
    let shipped = Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.checksum) })
    let recorded = try Self.recorded()
    let record = recorded[release] ?? [:]
    let changed = Set(shipped.keys).union(record.keys).filter { shipped[$0] != record[$0] }.sorted()
    #expect(
      !record.isEmpty && changed.isEmpty,
      """
      release \(release): \(record.isEmpty ? "not recorded" : "recorded with other bytes of \(changed)"). \
      A change to a repeatable definition is a new release: add a versioned migration (a \
      comment alone will do), then run scripts/record-repeatables.
      """)
    // Every release recorded is one that was shipped, oldest first.
    #expect(recorded.keys.allSatisfy { $0 <= release })
  }
}
