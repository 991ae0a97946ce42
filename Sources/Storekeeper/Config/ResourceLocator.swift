import Foundation

/// Where the files a release ships beside the binary are found when `MIGRATIONS_DIR`,
/// `OPENAPI_PATH` or `CONSOLE_DIR` is not set, so an installed server needs neither those
/// variables nor a particular working directory. For a name such as `Migrations`, the first
/// that exists of:
///
/// 1. `<directory of the executable>/Migrations` (files unpacked beside the binary);
/// 2. `<directory of the executable>/../share/storekeeper/Migrations` (the release tarball's
///    `bin/` and `share/storekeeper/`);
/// 3. `/usr/share/storekeeper/Migrations`;
/// 4. `Migrations` relative to the working directory (a checkout, as before).
///
/// The executable is `/proc/self/exe` resolved, so a symlink to the binary (`/opt/storekeeper`
/// pointing at the current release) finds the files of the release it belongs to. When none
/// exists the relative name is kept, and start-up names it in its error as before.
public struct ResourceLocator: Sendable {
  public static let sharedDirectory = "/usr/share/storekeeper"

  /// The directory holding the running executable; nil when it cannot be read.
  public var executableDirectory: String?
  public var exists: @Sendable (String) -> Bool

  public init(
    executableDirectory: String? = ResourceLocator.runningExecutableDirectory(),
    exists: @escaping @Sendable (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
  ) {
    self.executableDirectory = executableDirectory
    self.exists = exists
  }

  /// The places searched for `name`, in order.
  public func candidates(_ name: String) -> [String] {
    var paths: [String] = []
    if let dir = executableDirectory {
      paths.append(dir + "/" + name)
      let prefix = URL(fileURLWithPath: dir).deletingLastPathComponent().path
      paths.append((prefix == "/" ? "" : prefix) + "/share/storekeeper/" + name)
    }
    paths.append(Self.sharedDirectory + "/" + name)
    paths.append(name)
    return paths
  }

  /// The first candidate that exists, else `name` itself (relative to the working directory).
  public func locate(_ name: String) -> String {
    candidates(name).first(where: exists) ?? name
  }

  public static func runningExecutableDirectory() -> String? {
    guard
      let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
      path.hasPrefix("/")
    else { return nil }
    return URL(fileURLWithPath: path).deletingLastPathComponent().path
  }
}
