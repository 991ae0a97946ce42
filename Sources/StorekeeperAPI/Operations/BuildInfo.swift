import CBuildInfo

/// What this binary is, as `scripts/release` stamped it (`storekeeper --version`, `/readyz`).
/// A development build says "unknown" for both.
public enum BuildInfo {
  /// The release, from the repository's `VERSION` file: "0.9.0".
  public static let version = String(cString: storekeeper_build_version())
  /// The commit it was built from (`git rev-parse --short HEAD`), "-dirty" with changes.
  public static let commit = String(cString: storekeeper_build_commit())

  /// `storekeeper --version`'s line.
  public static var summary: String { "storekeeper \(version) (commit \(commit))" }
}
