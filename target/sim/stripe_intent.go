package sim

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// PaymentIntent statuses (Stripe's lifecycle). The simulator never cancels
// an intent, but the printed contract maps StatusCanceled as Stripe has it.
const (
	StatusProcessing            = "processing"
	StatusRequiresPaymentMethod = "requires_payment_method"
	StatusRequiresConfirmation  = "requires_confirmation"
	StatusRequiresAction        = "requires_action"
	StatusRequiresCapture       = "requires_capture"
	StatusCanceled              = "canceled"
)

// Stripe's test PaymentMethods with a behaviour of their own; every other
// "pm_card_…" id is a card that succeeds. PMProcessing is the simulator's
// invention: Stripe has no test card that stays "processing".
const (
	PMDeclined     = "pm_card_chargeDeclined"
	PMProcessing   = "pm_card_processing"
	PMAuthRequired = "pm_card_authenticationRequired"
)

// intentParams are the parameters of Stripe's "create a PaymentIntent";
// Stripe refuses any other with parameter_unknown, and so does the
// simulator. Most are accepted and kept without being interpreted.
var intentParams = []string{
	"amount", "amount_details", "application_fee_amount", "automatic_payment_methods", "capture_method",
	"confirm", "confirmation_method", "confirmation_token", "currency", "customer", "description",
	"error_on_requires_action", "expand", "mandate", "mandate_data", "metadata", "off_session",
	"on_behalf_of", "payment_method", "payment_method_configuration", "payment_method_data",
	"payment_method_options", "payment_method_types", "radar_options", "receipt_email", "return_url",
	"setup_future_usage", "shipping", "statement_descriptor", "statement_descriptor_suffix",
	"transfer_data", "transfer_group", "use_stripe_sdk",
}

// Stripe's documented limits on metadata and amounts.
const (
	maxMetadataKeys     = 50
	maxMetadataKeyLen   = 40
	maxMetadataValueLen = 500
	maxAmount           = 99999999 // eight digits
)

// intentInput is a validated create request. It never changes once built,
// so records and duplicates may share it.
type intentInput struct {
	params        map[string]any
	paramsJSON    []byte // params as JSON with sorted keys: equal parameters, equal bytes
	hash          string // hex SHA-256 of paramsJSON: what idempotency compares
	bodyHash      string // hex SHA-256 of the exact body
	amount        int64
	currency      string // lower-cased, as Stripe stores it
	metadata      map[string]string
	reference     string
	tenant        string
	paymentMethod string
	confirm       bool
}

// parseIntent validates create parameters the way Stripe does, in a fixed
// order so that a request with several problems always hears of the same
// one first. The input is returned with its hash even when invalid, since a
// reused idempotency key is compared before parameters are validated.
func parseIntent(params map[string]any, refField, tenantField string) (intentInput, *stripeError) {
	in := intentInput{params: params, paramsJSON: mustJSON(params), metadata: map[string]string{}}
	in.hash = sha256Hex(in.paramsJSON)

	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(intentParams, name) {
			return in, invalidParam("parameter_unknown", paramName(name), "Received unknown parameter: "+quoteName(name))
		}
	}

	amount, ok := params["amount"].(string)
	switch {
	case params["amount"] == nil:
		return in, invalidParam("parameter_missing", "amount", "Missing required param: amount.")
	case !ok || !isDigits(amount):
		return in, invalidParam("parameter_invalid_integer", "amount", "Invalid integer: amount must be a whole number of the currency's smallest unit.")
	}
	n, err := strconv.ParseInt(amount, 10, 64)
	switch {
	case err != nil || n > maxAmount:
		return in, invalidParam("amount_too_large", "amount", "Amount must be no more than 99999999 (eight digits).")
	case n < 1:
		return in, invalidParam("parameter_invalid_integer", "amount", "This value must be greater than or equal to 1.")
	}
	in.amount = n

	currency, ok := params["currency"].(string)
	switch {
	case params["currency"] == nil:
		return in, invalidParam("parameter_missing", "currency", "Missing required param: currency.")
	case !ok || !isCurrency(currency):
		return in, invalidParam("", "currency", "Invalid currency: use a three-letter ISO code.")
	}
	in.currency = strings.ToLower(currency)

	if e := in.parseMetadata(params["metadata"]); e != nil {
		return in, e
	}
	in.reference = in.metadata[strings.TrimPrefix(refField, "metadata.")]
	in.tenant = in.metadata[strings.TrimPrefix(tenantField, "metadata.")]

	for _, name := range []string{"description", "customer", "on_behalf_of", "receipt_email", "transfer_group", "payment_method"} {
		if v, ok := params[name]; ok {
			if _, isString := v.(string); !isString {
				return in, invalidParam("", name, "Invalid string: "+name+" must be a single value, not a hash or list.")
			}
		}
	}
	in.paymentMethod, _ = params["payment_method"].(string)
	if in.paymentMethod != "" && !strings.HasPrefix(in.paymentMethod, "pm_card_") {
		return in, &stripeError{status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "resource_missing", Param: "payment_method",
			Message: "No such PaymentMethod; this simulator knows only the test PaymentMethods pm_card_… (see /_sim/docs)."}
	}
	switch confirm := params["confirm"]; confirm {
	case nil, "false":
	case "true":
		in.confirm = true
	default:
		return in, invalidParam("", "confirm", "Invalid boolean: confirm must be true or false.")
	}
	switch params["capture_method"] {
	case nil, "automatic", "automatic_async", "manual":
	default:
		return in, invalidParam("", "capture_method", "Invalid capture_method: must be one of automatic, automatic_async or manual.")
	}
	if in.confirm && in.paymentMethod == "" {
		return in, invalidParam("parameter_missing", "payment_method",
			"confirm=true needs a payment_method in this simulator (e.g. pm_card_visa).")
	}
	return in, nil
}

// parseMetadata checks metadata against Stripe's rules: a hash of strings,
// at most 50 keys of at most 40 characters, values of at most 500. An empty
// value (metadata=) is Stripe's way of sending no metadata.
func (in *intentInput) parseMetadata(raw any) *stripeError {
	if raw == nil || raw == "" {
		return nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return invalidParam("", "metadata", "Invalid metadata: must be a hash of keys to strings, e.g. metadata[order]=7.")
	}
	if len(m) > maxMetadataKeys {
		return invalidParam("", "metadata", "Invalid metadata: at most 50 keys.")
	}
	for k, v := range m {
		s, ok := v.(string)
		switch {
		case !ok:
			return invalidParam("", paramName("metadata["+k+"]"), "Invalid metadata: values must be strings, not hashes or lists.")
		case len(k) > maxMetadataKeyLen:
			return invalidParam("", "metadata", "Invalid metadata: keys must be at most 40 characters.")
		case len(s) > maxMetadataValueLen:
			return invalidParam("", paramName("metadata["+k+"]"), "Invalid metadata: values must be at most 500 characters.")
		}
		in.metadata[k] = s
	}
	return nil
}

// outcome is what confirming the intent leads to: its status, and whether
// the card was declined (Stripe then answers 402 with the intent).
func (in *intentInput) outcome() (status string, declined bool) {
	switch {
	case !in.confirm && in.paymentMethod == "":
		return StatusRequiresPaymentMethod, false
	case !in.confirm:
		return StatusRequiresConfirmation, false
	case in.paymentMethod == PMDeclined:
		return StatusRequiresPaymentMethod, true
	case in.paymentMethod == PMProcessing:
		return StatusProcessing, false
	case in.paymentMethod == PMAuthRequired:
		return StatusRequiresAction, false
	case in.params["capture_method"] == "manual":
		return StatusRequiresCapture, false
	}
	return StatusSucceeded, false
}

// paymentIntent is the PaymentIntent object in Stripe's API: the fields
// settle and its tests read, plus those Stripe echoes from the request.
type paymentIntent struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Amount             int64             `json:"amount"`
	AmountCapturable   int64             `json:"amount_capturable"`
	AmountReceived     int64             `json:"amount_received"`
	CaptureMethod      string            `json:"capture_method"`
	ConfirmationMethod string            `json:"confirmation_method"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Customer           *string           `json:"customer"`
	Description        *string           `json:"description"`
	LastPaymentError   *stripeError      `json:"last_payment_error"`
	Livemode           bool              `json:"livemode"`
	Metadata           map[string]string `json:"metadata"`
	OnBehalfOf         *string           `json:"on_behalf_of"`
	PaymentMethod      *string           `json:"payment_method"`
	ReceiptEmail       *string           `json:"receipt_email"`
	Status             string            `json:"status"`
	TransferData       any               `json:"transfer_data"`
	TransferGroup      *string           `json:"transfer_group"`
}

// intentOf builds the API representation of a FlavorStripe record. s.mu
// must be held: the record's status may be changing.
func intentOf(rec *record) *paymentIntent {
	in := rec.intent
	str := func(name string) *string {
		if v, ok := in.params[name].(string); ok {
			return &v
		}
		return nil
	}
	orDefault := func(name, def string) string {
		if v := str(name); v != nil {
			return *v
		}
		return def
	}
	pi := &paymentIntent{
		ID:                 rec.obj.ID,
		Object:             "payment_intent",
		Amount:             rec.obj.Amount,
		CaptureMethod:      orDefault("capture_method", "automatic"),
		ConfirmationMethod: orDefault("confirmation_method", "automatic"),
		Created:            rec.obj.Created,
		Currency:           rec.obj.Currency,
		Customer:           str("customer"),
		Description:        str("description"),
		Metadata:           in.metadata,
		OnBehalfOf:         str("on_behalf_of"),
		PaymentMethod:      str("payment_method"),
		ReceiptEmail:       str("receipt_email"),
		Status:             rec.obj.Status,
		TransferData:       in.params["transfer_data"],
		TransferGroup:      str("transfer_group"),
	}
	switch rec.obj.Status {
	case StatusSucceeded:
		pi.AmountReceived = rec.obj.Amount
	case StatusRequiresCapture:
		pi.AmountCapturable = rec.obj.Amount
	case StatusRequiresPaymentMethod:
		if _, declined := in.outcome(); declined {
			pi.LastPaymentError = cardDeclined()
		}
	}
	return pi
}

// cardDeclined is the error of a declined card, as the intent's
// last_payment_error and, with the intent, as the 402 answer.
func cardDeclined() *stripeError {
	return &stripeError{status: http.StatusPaymentRequired, Type: typeCard, Code: "card_declined",
		DeclineCode: "generic_decline", Message: "Your card was declined."}
}
