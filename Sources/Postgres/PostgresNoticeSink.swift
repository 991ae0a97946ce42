import CPostgres
import StorekeeperLogging

/// Receives libpq's notices (server NOTICE/WARNING, and the FATAL a dying session gets while
/// idle), which libpq would otherwise print to standard error, and sends them to the log.
final class PostgresNoticeSink: Sendable {
  let logger: Logger

  init(logger: Logger) {
    self.logger = logger
  }

  /// Installs the sink on `connection`; the sink must outlive it (the connection keeps it).
  func install(on connection: OpaquePointer) {
    let context = Unmanaged.passUnretained(self).toOpaque()
    PQsetNoticeReceiver(
      connection,
      { context, result in
        guard let context, let result else { return }
        let sink = Unmanaged<PostgresNoticeSink>.fromOpaque(context).takeUnretainedValue()
        sink.receive(result)
      }, context)
  }

  private func receive(_ result: OpaquePointer) {
    func field(_ code: UInt8) -> String {
      PQresultErrorField(result, Int32(code)).map { String(cString: $0) } ?? ""
    }
    let severity = field(UInt8(ascii: "V"))
    let fields: [String: LogValue] = [
      "pg_severity": .string(severity), "pg_sqlstate": .string(field(UInt8(ascii: "C"))),
      "pg_message": .string(field(UInt8(ascii: "M"))),
    ]
    logger.log(severity == "WARNING" ? .warning : .debug, "database notice", fields)
  }
}
