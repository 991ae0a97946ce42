import Digest
import Foundation

/// One `Migrations/repeatable/name.sql` file: a definition (PL/pgSQL function, trigger, view)
/// that is applied again whenever its bytes change, as Flyway's `R__` files are. Versioned
/// migrations change tables and data once; what these files define is edited in place, so a
/// change to a function is a diff of that function, not a new copy of it.
struct RepeatableFile: Sendable, Equatable {
  /// The file name, which `schema_repeatables.name` records.
  var name: String
  var sql: String
  /// SHA-256 of the file's bytes, lowercase hex.
  var checksum: String

  /// The subdirectory of the migrations directory that holds them.
  static let subdirectory = "repeatable"

  /// The files in `directory`/repeatable, by name; none when there is no such directory.
  static func load(migrationsDirectory directory: String) throws -> [RepeatableFile] {
    let path = (directory.hasSuffix("/") ? directory : directory + "/") + subdirectory
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
      isDirectory.boolValue
    else { return [] }
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: path)
    } catch {
      throw MigrationError.unreadable(file: path)
    }
    var files: [RepeatableFile] = []
    for name in names.sorted() where name.hasSuffix(".sql") {
      guard isValidName(name) else { throw MigrationError.badFileName(name) }
      guard let data = FileManager.default.contents(atPath: path + "/" + name),
        let sql = String(data: data, encoding: .utf8)
      else { throw MigrationError.unreadable(file: name) }
      files.append(RepeatableFile(name: name, sql: sql, checksum: SHA256Digest.hex(data)))
    }
    return files
  }

  /// `user_state.sql`: lowercase letters, digits, `_` and `-`, then `.sql`.
  static func isValidName(_ name: String) -> Bool {
    let stem = name.utf8.dropLast(".sql".utf8.count)
    return !stem.isEmpty
      && stem.allSatisfy {
        ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f || $0 == 0x2d
      }
  }
}
