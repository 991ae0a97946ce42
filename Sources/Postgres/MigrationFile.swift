import Digest
import Foundation

/// One `Migrations/NNNN_name.sql` file, read and checksummed.
struct MigrationFile: Sendable, Equatable {
  var version: Int
  /// The file name, which is also what `schema_migrations.name` records.
  var name: String
  var sql: String
  /// SHA-256 of the file's bytes, lowercase hex.
  var checksum: String

  /// The migrations in `directory`, by version. Files not ending in `.sql` are ignored.
  static func load(directory: String) throws -> [MigrationFile] {
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: directory)
    } catch {
      throw MigrationError.unreadable(file: directory)
    }
    var files: [MigrationFile] = []
    for name in names.sorted() where name.hasSuffix(".sql") {
      guard let version = version(of: name) else { throw MigrationError.badFileName(name) }
      guard !files.contains(where: { $0.version == version }) else {
        throw MigrationError.badFileName(name)
      }
      let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
      guard let data = FileManager.default.contents(atPath: path),
        let sql = String(data: data, encoding: .utf8)
      else { throw MigrationError.unreadable(file: name) }
      files.append(
        MigrationFile(version: version, name: name, sql: sql, checksum: SHA256Digest.hex(data)))
    }
    return files.sorted { $0.version < $1.version }
  }

  /// `0007_add_orders.sql` → 7; nil when the name does not follow `NNNN_name.sql`.
  static func version(of name: String) -> Int? {
    let bytes = Array(name.utf8)
    let suffix = Array(".sql".utf8)
    guard bytes.count > 4 + 1 + suffix.count, Array(bytes.suffix(suffix.count)) == suffix,
      bytes[4] == UInt8(ascii: "_")
    else { return nil }
    let digits = bytes[0..<4]
    let stem = bytes[5..<(bytes.count - suffix.count)]
    guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
      stem.allSatisfy({ isNameByte($0) })
    else { return nil }
    return Int(String(decoding: digits, as: UTF8.self))
  }

  private static func isNameByte(_ c: UInt8) -> Bool {
    (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x5f
      || c == 0x2d
  }
}
