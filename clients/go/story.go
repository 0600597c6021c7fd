// A partner's first integration with Kobo, in Go, over the client openapi-generator 7.26.0
// generates from spec/openapi.yaml with its default options (`generate -g go`, no flags).
//
// The same story as clients/python/story.py and clients/typescript/story.ts, in the order a
// partner calls things, every answer asserted: first a recorded page with values of open enums
// this spec does not know (clients/recorded/), which must decode; then onboarding (login, profile, an integration token,
// a list of accounts with a partial body, a current account, a customer's virtual account and
// its idempotent retry, a credit, the integration's transactions, a failed verification typed),
// then transfers (name enquiry, an intra-bank transfer, an inter-bank one sent twice with one
// Idempotency-Key, a reused key refused, polled until settled, the balance exact), then a small
// payroll (a bulk transfer created and authorised, each with its key retried, polled until
// validated and until completed, its items paged with their outcomes). It needs a
// fresh `kobo demo` and reads where it is from the environment, as the other stories do:
// KOBO_BASE_URL, KOBO_OWNER_EMAIL, KOBO_OWNER_PASSWORD, KOBO_CLIENT_ID, KOBO_CLIENT_SECRET,
// KOBO_MAIN_ACCOUNT. `go vet` and `go build` check it; .ci/clients runs it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	kobo "github.com/GIT_USER_ID/GIT_REPO_ID"
)

// The sandbox's test data (spec: info.description, "Sandbox").
const (
	verifiedBVN = "22287654321" // verified: Amaka Nwosu
	failingBVN  = "22212345683" // ends in 83: verification fails, `83`
	koboBank    = "090823"      // Kobo's own bank code: intra-bank, settled at once
	otherBank   = "000013"      // Guaranty Trust Bank in the sandbox: inter-bank over NIP
	emeka       = "0123456788"  // Emeka Nwosu: transfers succeed within seconds
	bisi        = "0690000036"  // Bisi Alade: named otherwise in the payroll, so left out (49)
	chinedu     = "2000000011"  // the demo's first virtual account (Chinedu Obi)

	funding     = "100000.00"
	intraAmount = "5000.00"
	emekaAmount = "25000.00"
)

var balanceText = regexp.MustCompile(`^[0-9]+\.[0-9]{9}$`)

type failure struct{ what string }

func (f failure) Error() string { return f.what }

func check(condition bool, format string, args ...interface{}) {
	if !condition {
		panic(failure{fmt.Sprintf(format, args...)})
	}
}

// must fails the step on a transport error or an error answer, naming its envelope.
func must(err error, call string) {
	if err == nil {
		return
	}
	var answer *kobo.GenericOpenAPIError
	if errors.As(err, &answer) {
		panic(failure{fmt.Sprintf("%s: %s %s", call, err, answer.Body())})
	}
	panic(failure{fmt.Sprintf("%s: %s", call, err)})
}

// refused checks that an answer is the typed ErrorEnvelope with `code` and HTTP `status`.
func refused(err error, response *http.Response, code kobo.ResponseCode, status int, call string) {
	check(err != nil, "%s: succeeded, expected %s", call, code)
	var answer *kobo.GenericOpenAPIError
	check(errors.As(err, &answer), "%s: %v is not an answer", call, err)
	envelope, typed := answer.Model().(kobo.ErrorEnvelope)
	check(typed, "%s: the error %T is not an ErrorEnvelope (%s)", call, answer.Model(), answer.Body())
	check(envelope.ResponseCode == code, "%s: response_code %s, expected %s", call, envelope.ResponseCode, code)
	check(!envelope.Status && envelope.Message != "", "%s: envelope %+v", call, envelope)
	check(response != nil && response.StatusCode == status, "%s: HTTP %v, expected %d", call, response, status)
}

// kobos reads an amount with two fraction digits (or a balance with nine) as integer kobo.
func kobos(text string) int64 {
	whole, fraction, found := strings.Cut(text, ".")
	check(found && len(fraction) >= 2, "amount %q has no fraction digits", text)
	for _, digit := range fraction[2:] {
		check(digit == '0', "amount %q has fractions of a kobo", text)
	}
	value, err := strconv.ParseInt(whole+fraction[:2], 10, 64)
	check(err == nil, "amount %q: %v", text, err)
	return value
}

func balance(kobo int64) string { return fmt.Sprintf("%d.%02d0000000", kobo/100, kobo%100) }

func key() string {
	var bytes [16]byte
	_, err := rand.Read(bytes[:])
	check(err == nil, "random: %v", err)
	bytes[6] = bytes[6]&0x0f | 0x40
	bytes[8] = bytes[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", bytes[0:4], bytes[4:6], bytes[6:8], bytes[8:10], bytes[10:])
}

// is tells whether an open enum's value (a plain string: known today or added later) is `want`,
// one of the enum's named values.
func is[T ~string](value string, want T) bool { return T(value) == want }

// orNull prints a nullable string of an answer: its value, or null.
func orNull(value *string) string {
	if value == nil {
		return "null"
	}
	return *value
}

// show prints an open enum's value, known or not.
func show(value string) string { return strconv.Quote(value) }

type story struct {
	api                   *kobo.APIClient
	dashboard, integrated context.Context
	email, password       string
	clientID, secret      string
	mainAccount           string
	payroll               kobo.Account
	emekaBody             kobo.FundsTransferApiRequest
	emekaKey              string
	transfers             map[string]kobo.Transfer
}

func (s *story) logIn() {
	grant, _, err := s.api.SessionAPI.Login(context.Background()).
		LoginRequest(*kobo.NewLoginRequest(s.email, s.password)).Execute()
	must(err, "login")
	s.dashboard = context.WithValue(context.Background(), kobo.ContextAccessToken, grant.Data.AccessToken)
	// An operation without parameters takes `{}`: without Body the Go client sends `null` (01).
	profile, _, err := s.api.SessionAPI.GetProfile(s.dashboard).Body(map[string]interface{}{}).Execute()
	must(err, "get_profile")
	check(profile.Data.Member.Email == s.email, "get_profile: %s", profile.Data.Member.Email)
	check(profile.ResponseCode == kobo.SUCCESS, "get_profile: response_code %s", profile.ResponseCode)
}

func (s *story) takeIntegrationToken() {
	grant, _, err := s.api.SessionAPI.GenerateToken(context.Background()).
		GenerateTokenRequest(*kobo.NewGenerateTokenRequest(s.clientID, s.secret)).Execute()
	must(err, "generate_token")
	check(grant.Data.TokenType == kobo.TOKEN_TYPE_BEARER, "generate_token: token_type %s", grant.Data.TokenType)
	check(grant.Data.ExpiresIn > 0, "generate_token: expires_in %d", grant.Data.ExpiresIn)
	s.integrated = context.WithValue(context.Background(), kobo.ContextAccessToken, grant.Data.AccessToken)
}

func (s *story) listAccounts() {
	// Only `limit`: every other field of the request is optional, its default the server's.
	body := kobo.NewFetchCustomerAccountsRequest()
	body.SetLimit(100)
	page, _, err := s.api.AccountsAPI.FetchCustomerAccounts(s.integrated).FetchCustomerAccountsRequest(*body).Execute()
	must(err, "fetch_customer_accounts")
	found := false
	for _, account := range page.Data {
		check(balanceText.MatchString(account.Balance), "fetch_customer_accounts: balance %q", account.Balance)
		if account.AccountNumber == s.mainAccount {
			found = true
			check(account.AccountType == kobo.ACCOUNT_TYPE_POOL, "fetch_customer_accounts: main account %s", account.AccountType)
		}
	}
	check(found, "fetch_customer_accounts: %s not listed", s.mainAccount)
	check(!page.Pagination.HasMore, "fetch_customer_accounts: a fresh demo has more than 100 accounts")
}

func (s *story) openCurrentAccount() {
	body := kobo.NewCreateAccountRequest()
	body.SetAccountName("Adaeze Foods Ltd - Payroll")
	reply, _, err := s.api.AccountsAPI.CreateAccountApi(s.integrated).CreateAccountRequest(*body).IdempotencyKey(key()).Execute()
	must(err, "create_account_api")
	check(reply.Data.AccountType == kobo.ACCOUNT_TYPE_CURRENT, "create_account_api: %s", reply.Data.AccountType)
	check(reply.Data.Balance == "0.000000000", "create_account_api: balance %s", reply.Data.Balance)
	check(reply.Data.AccountName == "Adaeze Foods Ltd - Payroll", "create_account_api: %s", reply.Data.AccountName)
	s.payroll = reply.Data
}

func (s *story) giveCustomerAVirtualAccount() {
	body := kobo.NewCreateCustomerAccountRequest()
	body.SetBvn(verifiedBVN)
	body.SetEmail("chinedu.obi@example.com")
	idempotencyKey := key()
	first, _, err := s.api.AccountsAPI.CreateCustomerAccount(s.integrated).
		CreateCustomerAccountRequest(*body).IdempotencyKey(idempotencyKey).Execute()
	must(err, "create_customer_account")
	check(first.Data.AccountType == kobo.ACCOUNT_TYPE_VIRTUAL, "create_customer_account: %s", first.Data.AccountType)
	check(first.Data.AccountName == "Amaka Nwosu", "create_customer_account: %s", first.Data.AccountName)
	check(first.Data.ParentAccountNumber.Get() != nil && *first.Data.ParentAccountNumber.Get() == s.mainAccount,
		"create_customer_account: parent %v", first.Data.ParentAccountNumber.Get())
	// A retry with the same Idempotency-Key and body answers the first response again.
	again, response, err := s.api.AccountsAPI.CreateCustomerAccount(s.integrated).
		CreateCustomerAccountRequest(*body).IdempotencyKey(idempotencyKey).Execute()
	must(err, "create_customer_account (retry)")
	check(again.Data.AccountNumber == first.Data.AccountNumber, "create_customer_account: the retry opened another")
	check(response.Header.Get("Idempotent-Replayed") == "true", "create_customer_account: Idempotent-Replayed %q",
		response.Header.Get("Idempotent-Replayed"))
}

func (s *story) handleAFailedVerification() {
	body := kobo.NewCreateCustomerAccountRequest()
	body.SetBvn(failingBVN)
	_, response, err := s.api.AccountsAPI.CreateCustomerAccount(s.integrated).
		CreateCustomerAccountRequest(*body).IdempotencyKey(key()).Execute()
	// Each code has the catalog's name (the spec's x-enum-varnames): PROVIDER_ERROR is "83".
	refused(err, response, kobo.PROVIDER_ERROR, http.StatusUnprocessableEntity, "create_customer_account")
	check(string(kobo.PROVIDER_ERROR) == "83", "PROVIDER_ERROR is %s", kobo.PROVIDER_ERROR)
}

func (s *story) fundTheCurrentAccount() {
	body := kobo.NewSimulateInboundTransferRequest(s.payroll.AccountNumber, funding)
	body.SetNarration("Payroll funding - November")
	reply, _, err := s.api.SandboxAPI.SimulateInboundTransfer(s.integrated).
		SimulateInboundTransferRequest(*body).IdempotencyKey(key()).Execute()
	must(err, "simulate_inbound_transfer")
	check(reply.Data.TransactionType == kobo.TRANSACTION_TYPE_CREDIT, "simulate_inbound_transfer: %s", reply.Data.TransactionType)
	check(reply.Data.Amount == funding, "simulate_inbound_transfer: amount %s", reply.Data.Amount)
}

func (s *story) enquire(account, bank string) kobo.NameEnquiryResult {
	reply, _, err := s.api.TransfersAPI.NameEnquiry(s.integrated).
		NameEnquiryRequest(*kobo.NewNameEnquiryRequest(account, bank, s.payroll.AccountNumber)).Execute()
	must(err, "name_enquiry("+account+")")
	check(reply.Data.AccountNumber == account, "name_enquiry: %s", reply.Data.AccountNumber)
	return reply.Data
}

func (s *story) transferBody(to kobo.NameEnquiryResult, amount, narration string, kind kobo.TransferType) kobo.FundsTransferApiRequest {
	body := kobo.NewFundsTransferApiRequest(s.payroll.AccountNumber, s.payroll.AccountName, to.AccountNumber,
		to.AccountName, to.BankCode, amount, kind)
	body.SetNarration(narration)
	body.SetKyc(to.Kyc)
	if bvn := to.Bvn.Get(); bvn != nil {
		body.SetBvn(*bvn)
	}
	body.SetReference("PAY-" + strings.ReplaceAll(key(), "-", "")[:12])
	return *body
}

func (s *story) send(body kobo.FundsTransferApiRequest, idempotencyKey string) (*kobo.FundsTransferApiResponse, *http.Response, error) {
	return s.api.TransfersAPI.FundsTransferApi(s.integrated).IdempotencyKey(idempotencyKey).FundsTransferApiRequest(body).Execute()
}

func (s *story) payWithinKobo() {
	to := s.enquire(chinedu, koboBank)
	check(to.AccountName != "", "name_enquiry: Chinedu Obi has no name")
	reply, _, err := s.send(s.transferBody(to, intraAmount, "Refund - order 1042", kobo.TRANSFER_TYPE_INTRA), key())
	must(err, "funds_transfer_api (intra)")
	// Within Kobo: settled at once, and free.
	check(is(reply.Data.TransferStatus, kobo.TRANSFER_STATUS_SUCCESS), "intra transfer: %s", show(reply.Data.TransferStatus))
	check(is(reply.Data.Status, kobo.TRANSACTION_STATUS_SUCCESS), "intra transfer: status %s", show(reply.Data.Status))
	check(reply.Data.Fee == "0.00" && reply.Data.Vat == "0.00", "intra transfer: fee %s vat %s", reply.Data.Fee, reply.Data.Vat)
	s.transfers["intra"] = reply.Data
}

func (s *story) payEmekaAndRetry() {
	to := s.enquire(emeka, otherBank)
	check(to.AccountName == "Emeka Nwosu", "name_enquiry: %s", to.AccountName)
	body := s.transferBody(to, emekaAmount, "Logistics - November", kobo.TRANSFER_TYPE_INTER)
	idempotencyKey := key()
	first, _, err := s.send(body, idempotencyKey)
	must(err, "funds_transfer_api (inter, Emeka Nwosu)")
	// To another bank: debited at once (amount, fee, VAT), then NIP settles it.
	check(is(first.Data.TransferStatus, kobo.TRANSFER_STATUS_PROCESSING), "inter transfer: %s", show(first.Data.TransferStatus))
	check(is(first.Data.Status, kobo.TRANSACTION_STATUS_PENDING), "inter transfer: status %s", show(first.Data.Status))
	check(first.Data.Fee == "25.00" && first.Data.Vat == "1.88", "inter transfer: fee %s vat %s", first.Data.Fee, first.Data.Vat)
	// The network dropped the answer? The same request with the same key: the same transfer.
	again, response, err := s.send(body, idempotencyKey)
	must(err, "funds_transfer_api (the same Idempotency-Key)")
	check(again.Data.Id == first.Data.Id, "funds_transfer_api: the retry made another transfer")
	check(response.Header.Get("Idempotent-Replayed") == "true", "funds_transfer_api: Idempotent-Replayed %q",
		response.Header.Get("Idempotent-Replayed"))
	s.transfers["emeka"], s.emekaBody, s.emekaKey = first.Data, body, idempotencyKey
}

func (s *story) refuseAReusedKey() {
	other := s.emekaBody
	other.SetAmount("25001.00")
	_, response, err := s.send(other, s.emekaKey)
	refused(err, response, kobo.IDEMPOTENCY_KEY_REUSED, http.StatusUnprocessableEntity, "funds_transfer_api (reused key)")
}

func (s *story) emekaIsPaid() {
	sent := s.transfers["emeka"]
	deadline := time.Now().Add(30 * time.Second)
	for {
		body := kobo.NewGetTransferRequest()
		body.SetReferenceNumber(sent.ReferenceNumber)
		reply, _, err := s.api.TransfersAPI.GetTransferApi(s.integrated).GetTransferRequest(*body).Execute()
		must(err, "get_transfer_api (Emeka Nwosu)")
		if is(reply.Data.TransferStatus, kobo.TRANSFER_STATUS_SUCCESS) {
			session := reply.Data.SessionId.Get()
			check(session != nil && len(*session) == 30, "Emeka's transfer: NIP session_id %v", session)
			s.transfers["emeka"] = reply.Data
			return
		}
		// Open: a status added later is not final either (the spec: treat it as pending).
		check(!is(reply.Data.TransferStatus, kobo.TRANSFER_STATUS_FAILED) &&
			!is(reply.Data.TransferStatus, kobo.TRANSFER_STATUS_REVERSED), "Emeka's transfer: %s", show(reply.Data.TransferStatus))
		check(time.Now().Before(deadline), "Emeka's transfer: still processing after 30 s")
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *story) balancesAddUp() {
	emekaTransfer := s.transfers["emeka"]
	expected := kobos(funding) - kobos(intraAmount) - kobos(emekaAmount) - kobos(emekaTransfer.Fee) - kobos(emekaTransfer.Vat)
	filters := kobo.NewIntegrationTransactionFilters()
	filters.SetAccountNumber(s.payroll.AccountNumber)
	body := kobo.NewFetchTransactionsApiRequest()
	body.SetFilters(*filters)
	body.SetLimit(100)
	page, _, err := s.api.TransactionsAPI.FetchTransactionsApi(s.integrated).FetchTransactionsApiRequest(*body).Execute()
	must(err, "fetch_transactions_api (the current account)")
	// The credit, the intra-bank debit, Emeka's debit and its fee: every one, netting to the balance.
	check(len(page.Data) == 4, "fetch_transactions_api: %d transactions, expected 4", len(page.Data))
	var net int64
	for _, t := range page.Data {
		if t.TransactionType == kobo.TRANSACTION_TYPE_CREDIT {
			net += kobos(t.Amount)
		} else {
			net -= kobos(t.Amount)
		}
	}
	check(net == expected, "fetch_transactions_api: the movements net %d kobo, expected %d", net, expected)
	accounts := kobo.NewFetchCustomerAccountsRequest()
	accounts.SetLimit(100)
	listed, _, err := s.api.AccountsAPI.FetchCustomerAccounts(s.integrated).FetchCustomerAccountsRequest(*accounts).Execute()
	must(err, "fetch_customer_accounts")
	for _, account := range listed.Data {
		if account.AccountNumber == s.payroll.AccountNumber {
			check(account.Balance == balance(expected), "current account balance %s, expected %s", account.Balance, balance(expected))
			return
		}
	}
	check(false, "fetch_customer_accounts: the current account is missing")
}

// sendASmallPayroll: a bulk transfer of three payments, one to a holder named otherwise (left
// out), sent with a key (the retry is the same batch), judged in the background, the one left
// out read by its verdict; then authorised with the batch's own total and count and a key (the
// retry is the same answer), its whole total reserved, paid in the background (Emeka Nwosu's
// item over NIP) until completed, and every item read page by page with its outcome.
func (s *story) sendASmallPayroll() {
	// An item names its holder by account, bank and name (or by a saved beneficiary's id instead).
	item := func(account, bank, name, amount string) kobo.BulkTransferItemRequest {
		it := kobo.NewBulkTransferItemRequest(amount)
		it.SetAccountNumber(account)
		it.SetBankCode(bank)
		it.SetAccountName(name)
		return *it
	}
	body := kobo.NewCreateBulkTransferRequest(s.payroll.AccountNumber, kobo.BULK_ON_INVALID_SKIP_INVALID, []kobo.BulkTransferItemRequest{
		item(emeka, otherBank, "Emeka Nwosu", "1500"),
		item(chinedu, koboBank, "Adaeze Foods Ltd - Chinedu Obi", "2500.50"),
		item(bisi, otherBank, "Ngozi Eze", "1000"),
	})
	body.SetReference("PAYROLL-" + strings.ReplaceAll(key(), "-", "")[:12])
	body.SetNarration("December payments")
	idempotencyKey := key()
	create := func() (*kobo.BulkTransferResponse, *http.Response, error) {
		return s.api.TransfersAPI.CreateBulkTransferApi(s.integrated).IdempotencyKey(idempotencyKey).
			CreateBulkTransferRequest(*body).Execute()
	}
	sent, _, err := create()
	must(err, "create_bulk_transfer_api")
	again, _, err := create()
	must(err, "create_bulk_transfer_api (the same key)")
	check(again.Data.BulkTransferId == sent.Data.BulkTransferId, "sent twice: %s, %s", sent.Data.BulkTransferId, again.Data.BulkTransferId)
	check(is(sent.Data.Status, kobo.BULK_TRANSFER_STATUS_VALIDATING), "create_bulk_transfer_api: %s", show(sent.Data.Status))

	// Judged in the background, within seconds.
	batch := s.pollBulkTransfer(sent.Data.BulkTransferId, 30*time.Second, kobo.BULK_TRANSFER_STATUS_VALIDATING)
	check(is(batch.Status, kobo.BULK_TRANSFER_STATUS_VALIDATED), "get_bulk_transfer_api: %s after 30 s", show(batch.Status))
	counts := batch.Counts
	check(counts.Items == 3 && counts.Valid == 2 && counts.Invalid == 1, "get_bulk_transfer_api: counts %+v", counts)
	check(kobos(batch.Totals.Amount) == kobos("4000.50"), "get_bulk_transfer_api: amount %s", batch.Totals.Amount)
	filter := kobo.NewFetchBulkTransferItemsRequest(sent.Data.BulkTransferId)
	filter.SetValidation(kobo.BULK_ITEM_VALIDATION_INVALID)
	invalid, _, err := s.api.TransfersAPI.FetchBulkTransferItemsApi(s.integrated).FetchBulkTransferItemsRequest(*filter).Execute()
	must(err, "fetch_bulk_transfer_items_api (invalid)")
	check(len(invalid.Data) == 1, "fetch_bulk_transfer_items_api: %d invalid items", len(invalid.Data))
	left := invalid.Data[0]
	check(orNull(left.RefusalCode.Get()) == "49", "fetch_bulk_transfer_items_api: refusal %s", orNull(left.RefusalCode.Get()))
	check(orNull(left.ConfirmedName.Get()) == "Bisi Alade", "fetch_bulk_transfer_items_api: %s", orNull(left.ConfirmedName.Get()))
	// Nothing has moved yet: the partner authorises exactly what it read, the total and the count.
	check(left.Outcome == kobo.BULK_ITEM_OUTCOME_UNPAID, "before authorising: %s", left.Outcome)
	authorised := s.authorisePayroll(*batch)

	// Paid in the background; Emeka Nwosu's item settles over NIP within seconds.
	done := s.pollBulkTransfer(sent.Data.BulkTransferId, 60*time.Second,
		kobo.BULK_TRANSFER_STATUS_PENDING_APPROVAL, kobo.BULK_TRANSFER_STATUS_EXECUTING)
	check(is(done.Status, kobo.BULK_TRANSFER_STATUS_COMPLETED), "get_bulk_transfer_api: %s 60 s after authorising", show(done.Status))
	counts = done.Counts
	check(counts.Succeeded == 2 && counts.Processing == 0 && counts.Failed == 0 && counts.Reversed == 0,
		"get_bulk_transfer_api: counts %+v", counts)
	totals := done.Totals
	check(totals.Reserved == authorised.Totals.Reserved && totals.Reserved == totals.Total,
		"get_bulk_transfer_api: reserved %s of %s (%s authorised)", totals.Reserved, totals.Total, authorised.Totals.Reserved)
	check(totals.Released == "0.00", "get_bulk_transfer_api: released %s", totals.Released)
	check(done.CompletedAt.Get() != nil, "get_bulk_transfer_api: completed without completed_at")

	// Every item, two a page: the two valid ones paid, each with its transfer's reference number;
	// the one left out never paid.
	items := s.allItems(sent.Data.BulkTransferId)
	check(len(items) == 3, "fetch_bulk_transfer_items_api: %d items over its pages", len(items))
	paid := map[string]bool{}
	for _, it := range items {
		kobos(it.Amount)
		reference := it.ReferenceNumber.Get()
		if it.Validation == kobo.BULK_ITEM_VALIDATION_VALID {
			check(it.Outcome == kobo.BULK_ITEM_OUTCOME_SUCCESS, "item %d (%s): %s", it.Index, it.AccountNumber, it.Outcome)
			check(reference != nil && *reference != "", "item %d (%s): no reference_number", it.Index, it.AccountNumber)
			check(it.FailureCode.Get() == nil, "item %d: failure_code %s", it.Index, orNull(it.FailureCode.Get()))
			paid[it.AccountNumber] = true
		} else {
			check(it.Outcome == kobo.BULK_ITEM_OUTCOME_UNPAID, "item %d (%s): %s", it.Index, it.AccountNumber, it.Outcome)
			check(reference == nil, "item %d: reference_number %s", it.Index, orNull(reference))
		}
	}
	check(len(paid) == 2 && paid[emeka] && paid[chinedu], "paid: %v", paid)
}

// pollBulkTransfer reads a batch every half second while its status is one of `while`, for at
// most `limit`, and answers the last read.
func (s *story) pollBulkTransfer(id string, limit time.Duration, while ...kobo.BulkTransferStatus) *kobo.BulkTransfer {
	deadline := time.Now().Add(limit)
	for {
		reply, _, err := s.api.TransfersAPI.GetBulkTransferApi(s.integrated).
			BulkTransferIdRequest(*kobo.NewBulkTransferIdRequest(id)).Execute()
		must(err, "get_bulk_transfer_api")
		waiting := false
		for _, status := range while {
			waiting = waiting || is(reply.Data.Status, status)
		}
		if !waiting || time.Now().After(deadline) {
			return &reply.Data
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// authorisePayroll: authorize_bulk_transfer_api with the batch's own figures and a fresh key,
// then the same call with the same key (a dropped answer): the same answer again, and nothing
// reserved twice.
func (s *story) authorisePayroll(batch kobo.BulkTransfer) kobo.BulkTransfer {
	body := *kobo.NewAuthorizeBulkTransferApiRequest(batch.BulkTransferId, batch.Totals.Total, batch.Counts.Valid)
	idempotencyKey := key()
	authorise := func() (*kobo.BulkTransferResponse, *http.Response, error) {
		return s.api.TransfersAPI.AuthorizeBulkTransferApi(s.integrated).IdempotencyKey(idempotencyKey).
			AuthorizeBulkTransferApiRequest(body).Execute()
	}
	first, _, err := authorise()
	must(err, "authorize_bulk_transfer_api")
	again, response, err := authorise()
	must(err, "authorize_bulk_transfer_api (the same key)")
	firstJSON, _ := json.Marshal(first.Data)
	againJSON, _ := json.Marshal(again.Data)
	check(string(againJSON) == string(firstJSON), "authorize_bulk_transfer_api: the retry answered %s, first %s", againJSON, firstJSON)
	check(response.Header.Get("Idempotent-Replayed") == "true", "authorize_bulk_transfer_api: Idempotent-Replayed %q",
		response.Header.Get("Idempotent-Replayed"))
	authorised := first.Data
	check(authorised.BulkTransferId == batch.BulkTransferId, "authorize_bulk_transfer_api: %s", authorised.BulkTransferId)
	// No approval policy in the demo: its items are being paid (one would hold it, pending_approval).
	check(is(authorised.Status, kobo.BULK_TRANSFER_STATUS_EXECUTING), "authorize_bulk_transfer_api: %s", show(authorised.Status))
	totals := authorised.Totals
	check(totals.Total == batch.Totals.Total && totals.Reserved == totals.Total,
		"authorize_bulk_transfer_api: reserved %s of %s (the batch's %s)", totals.Reserved, totals.Total, batch.Totals.Total)
	check(totals.Released == "0.00", "authorize_bulk_transfer_api: released %s", totals.Released)
	by := orNull(authorised.AuthorisedBy.Get())
	check(by == "integration", "authorize_bulk_transfer_api: authorised_by %s", by)
	return authorised
}

// allItems reads every item of a batch, a page of two at a time (numbered paging).
func (s *story) allItems(id string) []kobo.BulkTransferItem {
	var items []kobo.BulkTransferItem
	for page := int32(1); page <= 10; page++ {
		body := kobo.NewFetchBulkTransferItemsRequest(id)
		body.SetPage(page)
		body.SetPageSize(2)
		reply, _, err := s.api.TransfersAPI.FetchBulkTransferItemsApi(s.integrated).FetchBulkTransferItemsRequest(*body).Execute()
		must(err, fmt.Sprintf("fetch_bulk_transfer_items_api (page %d)", page))
		check(reply.Pagination.PageSize == 2, "fetch_bulk_transfer_items_api: page_size %d", reply.Pagination.PageSize)
		number := "null"
		if answered := reply.Pagination.Page.Get(); answered != nil {
			number = strconv.Itoa(int(*answered))
		}
		check(number == strconv.Itoa(int(page)), "fetch_bulk_transfer_items_api: page %s, expected %d", number, page)
		items = append(items, reply.Data...)
		if !reply.Pagination.HasMore {
			return items
		}
	}
	check(false, "fetch_bulk_transfer_items_api: more than 10 pages of two items")
	return nil
}

// keepUnknownValues: a later minor release may add a value to an open enum (x-extensible-enum).
// A recorded page with `status: "on_hold"` and `channel: "rtgs"` decodes through the generated
// models, the unknown values kept as strings and the known ones still named. No call.
func (s *story) keepUnknownValues() {
	recorded, err := os.ReadFile("../recorded/fetch_transactions_api-unknown-values.json")
	check(err == nil, "the recorded page: %v", err)
	var page kobo.FetchTransactionsApiResponse
	check(json.Unmarshal(recorded, &page) == nil, "the recorded page does not decode: %v", json.Unmarshal(recorded, &page))
	check(len(page.Data) == 1, "the recorded page has %d transactions", len(page.Data))
	transaction := page.Data[0]
	status := transaction.Status
	check(status == "on_hold" && !kobo.TransactionStatus(status).IsValid(), "status %s", show(status))
	check(transaction.Channel == "rtgs" && !kobo.Channel(transaction.Channel).IsValid(), "channel %s", show(transaction.Channel))
	check(is(transaction.TransactionCategory, kobo.TRANSACTION_CATEGORY_COLLECTION),
		"transaction_category %s", show(transaction.TransactionCategory))
	// As the spec says of a status: an unknown one is treated as pending, so it is not final.
	final := is(status, kobo.TRANSACTION_STATUS_SUCCESS) || is(status, kobo.TRANSACTION_STATUS_FAILED)
	check(!final, "an unknown status is not final")
}

func main() {
	settings := map[string]string{}
	var missing []string
	for _, name := range []string{"KOBO_BASE_URL", "KOBO_OWNER_EMAIL", "KOBO_OWNER_PASSWORD", "KOBO_CLIENT_ID", "KOBO_CLIENT_SECRET", "KOBO_MAIN_ACCOUNT"} {
		settings[name] = os.Getenv(name)
		if settings[name] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "go story: set %s (see docs/partners.md, Clients in other languages)\n", strings.Join(missing, ", "))
		os.Exit(2)
	}
	configuration := kobo.NewConfiguration()
	configuration.Servers = kobo.ServerConfigurations{{URL: settings["KOBO_BASE_URL"]}}
	s := &story{
		api:         kobo.NewAPIClient(configuration),
		email:       settings["KOBO_OWNER_EMAIL"],
		password:    settings["KOBO_OWNER_PASSWORD"],
		clientID:    settings["KOBO_CLIENT_ID"],
		secret:      settings["KOBO_CLIENT_SECRET"],
		mainAccount: settings["KOBO_MAIN_ACCOUNT"],
		transfers:   map[string]kobo.Transfer{},
	}
	steps := []struct {
		name string
		run  func()
	}{
		{"a recorded page with values of open enums this spec does not know", s.keepUnknownValues},
		{"log in and read the profile", s.logIn},
		{"take an integration token", s.takeIntegrationToken},
		{"list accounts (a partial body: limit only)", s.listAccounts},
		{"open a current account", s.openCurrentAccount},
		{"give a customer a virtual account, retry it", s.giveCustomerAVirtualAccount},
		{"handle a failed verification (83, typed)", s.handleAFailedVerification},
		{"fund the current account", s.fundTheCurrentAccount},
		{"pay within Kobo", s.payWithinKobo},
		{"pay Emeka Nwosu, retry with the same key", s.payEmekaAndRetry},
		{"refuse a reused key (27, typed)", s.refuseAReusedKey},
		{"Emeka Nwosu is paid", s.emekaIsPaid},
		{"balances add up", s.balancesAddUp},
		{"send a small payroll: validated, authorised (twice with one key), completed, its items paged", s.sendASmallPayroll},
	}
	passed := 0
	for _, step := range steps {
		started := time.Now()
		if failed := run(step.run); failed != nil {
			fmt.Printf("  FAIL %s: %s\n", step.name, failed)
			fmt.Printf("go: %d passed, 1 failed\n", passed)
			os.Exit(1)
		}
		passed++
		fmt.Printf("  ok   %s (%d ms)\n", step.name, time.Since(started).Milliseconds())
	}
	fmt.Printf("go: %d passed, 0 failed\n", passed)
}

// run runs one step and turns its failure into an error.
func run(step func()) (failed error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			if f, ok := recovered.(failure); ok {
				failed = f
				return
			}
			panic(recovered)
		}
	}()
	step()
	return nil
}
