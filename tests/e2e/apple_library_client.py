"""Calls the App Store Server API with Apple's own client (PyPI `app-store-server-library`'s
`AppStoreServerAPIClient`), for tests/e2e/test_apple_additions.py: the fake App Store must serve
what Apple's library sends, as Apple does. Runs under APPLE_LIBRARY_PYTHON, like
apple_library_verifier.py. Only the base URL is changed (to the fake's), since the library
knows Apple's hosts only.

stdin: {"base_url", "key_pem", "key_id", "issuer_id", "bundle_id", "environment",
"calls": [{"original_transaction_id", "app_account_token"} | {"history": <transaction id>,
"filters": {TransactionHistoryRequest's fields: "productIds", "productTypes", "startDate", ...}}]}.
stdout: one answer per call: {"status": 200} (a history's with "transaction_ids", every page's,
in order) or {"status": <HTTP status>, "error_code": <Apple's errorCode or null>}.
"""

from __future__ import annotations

import base64
import json
import sys

from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient, GetTransactionHistoryVersion
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.InAppOwnershipType import InAppOwnershipType
from appstoreserverlibrary.models.TransactionHistoryRequest import ProductType, TransactionHistoryRequest
from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest


def main() -> None:
    request = json.load(sys.stdin)
    client = AppStoreServerAPIClient(
        request["key_pem"].encode(), request["key_id"], request["issuer_id"], request["bundle_id"],
        Environment(request["environment"]))
    client._base_url = request["base_url"]
    answers = []
    for call in request["calls"]:
        try:
            if "history" in call:
                answers.append({"status": 200, "transaction_ids": history(client, call)})
                continue
            client.set_app_account_token(
                call["original_transaction_id"],
                UpdateAppAccountTokenRequest(appAccountToken=call["app_account_token"]))
            answers.append({"status": 200})
        except APIException as e:
            answers.append({"status": e.http_status_code, "error_code": e.raw_api_error})
    json.dump(answers, sys.stdout)


def history(client: AppStoreServerAPIClient, call: dict) -> list[str]:
    filters = dict(call.get("filters", {}))
    if "productTypes" in filters:
        filters["productTypes"] = [ProductType(t) for t in filters["productTypes"]]
    if "inAppOwnershipType" in filters:
        filters["inAppOwnershipType"] = InAppOwnershipType(filters["inAppOwnershipType"])
    request = TransactionHistoryRequest(**filters)
    found, revision = [], None
    while True:
        page = client.get_transaction_history(call["history"], revision, request, GetTransactionHistoryVersion.V2)
        for signed in page.signedTransactions or []:
            claims = signed.split(".")[1]
            found.append(json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))["transactionId"])
        if not page.hasMore:
            return found
        revision = page.revision


if __name__ == "__main__":
    main()
