import Digest
import Foundation
import StorekeeperLogging

/// The console's files (`CONSOLE_DIR`), read once at start-up like the migrations and the
/// contract: what is served is fixed for the life of the process, and a request can only ever
/// name one of these files (each is a route of its own; no path reaches the file system).
package struct ConsoleAssets: Sendable {
  var files: [ConsoleFile]

  static let maxFileBytes = 1 << 20
  static let maxFiles = 64

  /// The directory's servable files: flat, named with letters, digits, '-', '_' and one
  /// extension `ConsoleFile.contentTypes` knows. Nil when the directory cannot be read.
  package static func load(directory: String, logger: Logger) -> ConsoleAssets? {
    let manager = FileManager.default
    guard let names = try? manager.contentsOfDirectory(atPath: directory) else {
      logger.warning(
        "admin console not served: CONSOLE_DIR cannot be read", ["directory": .string(directory)])
      return nil
    }
    var files: [ConsoleFile] = []
    for name in names.sorted() {
      let parts = name.split(separator: ".", omittingEmptySubsequences: false)
      guard parts.count == 2, isPlainName(parts[0]),
        let type = ConsoleFile.contentTypes[String(parts[1])]
      else { continue }
      let path = directory + "/" + name
      guard let data = manager.contents(atPath: path), data.count <= maxFileBytes else {
        logger.warning(
          "admin console file skipped: unreadable or over 1 MiB", ["file": .string(name)])
        continue
      }
      guard files.count < maxFiles else { break }
      let body = [UInt8](data)
      let digest = Hex.encode(SHA256Digest.hash(body).prefix(16))
      files.append(
        ConsoleFile(name: name, contentType: type, body: body, etag: "\"\(digest)\""))
    }
    guard files.contains(where: { $0.name == "index.html" }) else {
      logger.warning(
        "admin console not served: CONSOLE_DIR has no index.html", ["directory": .string(directory)]
      )
      return nil
    }
    return ConsoleAssets(files: files)
  }

  private static func isPlainName(_ text: Substring) -> Bool {
    !text.isEmpty
      && text.utf8.allSatisfy { byte in
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
          || byte == 45 || byte == 95
      }
  }
}
