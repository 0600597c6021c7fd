// A partner's first integration with Kobo, in Go, over the client openapi-generator 7.26.0
// generates from spec/openapi.yaml with its default options (`generate -g go`, no flags).
//
// The same story as clients/python/story.py and clients/typescript/story.ts, in the order a
// partner calls things, every answer asserted: first a recorded page with values of open enums
// this spec does not know (clients/recorded/), which must decode; then onboarding (login, profile, an integration token,
// a list of accounts with a partial body, a current account, a customer's virtual account and
// its idempotent retry, a credit, the integration's transactions, a failed verification typed),
// then transfers (name enquiry, an intra-bank transfer, an inter-bank one sent twice with one
// Idempotency-Key, a reused key refused, polled until settled, the balance exact). It needs a
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
