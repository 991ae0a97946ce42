import Foundation

/// `storekeeper fake-appstore`: replaced by the real server in the fake App Store work.
public enum FakeAppStoreCommand {
  public static func run(_ arguments: [String]) async -> Int32 {
    FileHandle.standardError.write(Data("fake-appstore: not built yet\n".utf8))
    return 1
  }
}
