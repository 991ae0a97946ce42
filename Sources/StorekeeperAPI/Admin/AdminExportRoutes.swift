import HTTP
import StorekeeperCore

/// `GET /admin/v1/exports/{orders|ledger|transactions}` (read scope): the rows of
/// `storekeeper export`, the same columns and bytes, streamed as the answer's body. Each
/// keyset page is read from the read pool and written to the client before the next is read;
/// a client reading slowly makes the export wait (the server holds a bounded buffer), and one
/// that goes away ends it at the next page.
package struct AdminExportRoutes: Sendable {
  let auth: AdminAuthenticator
  let exporter: Exporter
  /// Bytes gathered before they are handed to the connection: one chunk on the wire.
  static let pieceBytes = 64 * 1024

  package init(auth: AdminAuthenticator, exporter: Exporter) {
    self.auth = auth
    self.exporter = exporter
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/exports/{kind}") { request, context in
      _ = try auth.authenticate(request, context)
      guard let kind = context.parameters["kind"].flatMap(ExportKind.init(rawValue:)) else {
        throw HTTPError(
          404, code: "export_not_found", detail: "exports are orders, ledger and transactions")
      }
      let query = try ExportParameters.parse(request.query)
      let exporter = self.exporter
      let logger = context.logger
      return Response(
        status: 200, headers: Self.headers(kind, query),
        stream: BodyStream { writer in
          var piece: [UInt8] = []
          if let header = Exporter.header(kind, query.format) {
            piece.append(contentsOf: header.utf8)
            piece.append(10)
          }
          let count = try await exporter.export(
            kind, format: query.format, from: query.fromUTC, to: query.toUTC
          ) { lines in
            for line in lines {
              piece.append(contentsOf: line.utf8)
              piece.append(10)
              if piece.count >= Self.pieceBytes {
                try await writer.write(piece)
                piece.removeAll(keepingCapacity: true)
              }
            }
            // The page's last lines go before the next page is read.
            try await writer.write(piece)
            piece.removeAll(keepingCapacity: true)
          }
          try await writer.write(piece)
          logger.info("export streamed", ["kind": .string(kind.rawValue), "rows": .int(count)])
        })
    }
  }

  static func headers(_ kind: ExportKind, _ query: ExportParameters) -> HTTPHeaders {
    let type =
      query.format == .csv ? "text/csv; charset=utf-8" : "application/x-ndjson"
    // The name carries only checked characters: the kind and the range's dates.
    let name =
      "\(kind.rawValue)-\(query.from.prefix(10))-\(query.to.prefix(10)).\(query.format.rawValue)"
    return [
      "Content-Type": type, "Content-Disposition": "attachment; filename=\"\(name)\"",
      "Cache-Control": "no-store",
    ]
  }
}
