import FakeGooglePlay

/// The service account key file a fake Google Play hands out, made once per test process for
/// the tests that only need a well-formed one (each fake makes two RSA keys), off the global
/// executor (see `onOwnThread`). Its `token_uri` names a fake that is gone: callers set their own.
enum FakeKeyFile {
  static let bytes = Task<[UInt8], any Error> {
    var configuration = FakeGooglePlayServer.Configuration()
    configuration.logger = FakePlay.quiet
    let server = try await onOwnThread { [configuration] in
      try FakeGooglePlayServer(configuration: configuration)
    }
    try server.start()
    let bytes = try server.serviceAccountKeyJSON()
    await server.shutdown()
    return bytes
  }
}
