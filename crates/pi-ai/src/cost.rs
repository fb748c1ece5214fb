//! What a response cost: usage tokens times the model's per-million-token prices.

use crate::types::{Model, Usage, UsageCost};

/// Fill `usage.cost` from `model`'s prices and return it (pi's `calculateCost`).
///
/// Each bucket is `price / 1e6 * tokens` and the total is their sum, added in the order input,
/// output, cache read, cache write. The order of operations is pi's so the floating-point
/// results, and the session files that record them, match to the last bit.
///
/// A long-context tier replaces the prices when the request's input (cached tokens included) is
/// above its threshold; of several, the highest threshold passed wins. Cache writes kept for an
/// hour (`cacheWrite1h`) cost twice the input price.
pub fn calculate_cost(model: &Model, usage: &mut Usage) -> UsageCost {
    let per_token = |price_per_million: f64, tokens: u64| (price_per_million / 1_000_000.0) * tokens as f64;
    let input_tokens = usage.input + usage.cache_read + usage.cache_write;
    let base = &model.cost;
    let (mut input, mut output, mut cache_read, mut cache_write) =
        (base.input, base.output, base.cache_read, base.cache_write);
    let mut threshold: Option<u64> = None;
    for tier in &base.tiers {
        if input_tokens > tier.input_tokens_above && threshold.is_none_or(|t| tier.input_tokens_above > t) {
            (input, output, cache_read, cache_write) = (tier.input, tier.output, tier.cache_read, tier.cache_write);
            threshold = Some(tier.input_tokens_above);
        }
    }
    let long_write = usage.cache_write_1h.unwrap_or(0).min(usage.cache_write);
    let short_write = usage.cache_write - long_write;
    let cost = &mut usage.cost;
    cost.input = per_token(input, usage.input);
    cost.output = per_token(output, usage.output);
    cost.cache_read = per_token(cache_read, usage.cache_read);
    // Written as pi 1.6 writes it (not per token), so the float matches to the last bit.
    cost.cache_write = (cache_write * short_write as f64 + input * 2.0 * long_write as f64) / 1_000_000.0;
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
    cost.total_from_provider = Some(false);
    *cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{CostTier, ModelCost};

    #[test]
    fn long_context_tiers_replace_the_prices_above_their_threshold() {
        let m = crate::models::get_model("openai", "gpt-5.4").expect("gpt-5.4");
        assert_eq!(m.cost.tiers.len(), 1, "{:?}", m.cost);
        let mut small = Usage {
            input: 200_000,
            output: 1_000,
            ..Default::default()
        };
        calculate_cost(m, &mut small);
        assert!((small.cost.input - 0.5).abs() < 1e-12, "{:?}", small.cost);
        // 272,000 tokens of input with the cache read counted: above the tier.
        let mut large = Usage {
            input: 262_001,
            cache_read: 10_000,
            output: 1_000,
            ..Default::default()
        };
        calculate_cost(m, &mut large);
        assert_eq!(large.cost.input, (5.0 / 1e6) * 262_001.0);
        assert_eq!(large.cost.output, (22.5 / 1e6) * 1_000.0);
        assert_eq!(large.cost.cache_read, (0.5 / 1e6) * 10_000.0);

        let tier = |above, input| CostTier {
            input_tokens_above: above,
            input,
            ..Default::default()
        };
        let mut two = model(1.0, 0.0, 0.0, 0.0);
        two.cost.tiers = vec![tier(100, 3.0), tier(10, 2.0)];
        let mut usage = Usage {
            input: 1_000,
            ..Default::default()
        };
        calculate_cost(&two, &mut usage);
        assert_eq!(
            usage.cost.input,
            (3.0 / 1e6) * 1_000.0,
            "the highest threshold passed wins"
        );
    }

    #[test]
    fn hour_long_cache_writes_cost_twice_the_input_price() {
        let m = model(3.0, 15.0, 0.3, 3.75);
        let mut usage = Usage {
            cache_write: 1_000,
            cache_write_1h: Some(400),
            ..Default::default()
        };
        calculate_cost(&m, &mut usage);
        assert_eq!(usage.cost.cache_write, (3.75 * 600.0 + 3.0 * 2.0 * 400.0) / 1e6);
    }

    fn model(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Model {
        Model {
            id: "m".into(),
            name: "M".into(),
            api: "openai-completions".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec![],
            cost: ModelCost {
                input,
                output,
                cache_read,
                cache_write,
                tiers: Vec::new(),
            },
            context_window: 0,
            max_tokens: 0,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    /// Every distinct usage recorded in the golden session files of the TypeScript pi, with the
    /// model that produced it. The golden models.json priced `mock-model` at 1/2/0/0 and
    /// `mock-thinker` at 3/15/0.3/3.75 dollars per million tokens.
    const GOLDEN: &[(&str, &str)] = &[
        (
            "mock-model",
            r#"{"input":1393,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":1395,"cost":{"input":0.001393,"output":0.000004,"cacheRead":0,"cacheWrite":0,"total":0.001397}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1394,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":1397,"cost":{"input":0.0013939999999999998,"output":0.000006,"cacheRead":0,"cacheWrite":0,"total":0.0013999999999999998}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1406,"output":16,"cacheRead":0,"cacheWrite":0,"totalTokens":1422,"cost":{"input":0.001406,"output":0.000032,"cacheRead":0,"cacheWrite":0,"total":0.0014379999999999998}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1407,"output":16,"cacheRead":0,"cacheWrite":0,"totalTokens":1423,"cost":{"input":0.0014069999999999998,"output":0.000032,"cacheRead":0,"cacheWrite":0,"total":0.0014389999999999997}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1415,"output":16,"cacheRead":0,"cacheWrite":0,"totalTokens":1431,"cost":{"input":0.001415,"output":0.000032,"cacheRead":0,"cacheWrite":0,"total":0.001447}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1450,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":1456,"cost":{"input":0.00145,"output":0.000012,"cacheRead":0,"cacheWrite":0,"total":0.001462}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1505,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":1512,"cost":{"input":0.0015049999999999998,"output":0.000014,"cacheRead":0,"cacheWrite":0,"total":0.0015189999999999997}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1513,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":1517,"cost":{"input":0.001513,"output":0.000008,"cacheRead":0,"cacheWrite":0,"total":0.001521}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1514,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":1521,"cost":{"input":0.001514,"output":0.000014,"cacheRead":0,"cacheWrite":0,"total":0.0015279999999999998}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1540,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":1547,"cost":{"input":0.00154,"output":0.000014,"cacheRead":0,"cacheWrite":0,"total":0.0015539999999999998}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1586,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":1593,"cost":{"input":0.001586,"output":0.000014,"cacheRead":0,"cacheWrite":0,"total":0.0015999999999999999}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1596,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":1603,"cost":{"input":0.001596,"output":0.000014,"cacheRead":0,"cacheWrite":0,"total":0.0016099999999999999}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1615,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":1622,"cost":{"input":0.001615,"output":0.000014,"cacheRead":0,"cacheWrite":0,"total":0.0016289999999999998}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1669,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":1675,"cost":{"input":0.001669,"output":0.000012,"cacheRead":0,"cacheWrite":0,"total":0.001681}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1680,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":1686,"cost":{"input":0.0016799999999999999,"output":0.000012,"cacheRead":0,"cacheWrite":0,"total":0.001692}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1691,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":1697,"cost":{"input":0.001691,"output":0.000012,"cacheRead":0,"cacheWrite":0,"total":0.001703}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1759,"output":15,"cacheRead":0,"cacheWrite":0,"totalTokens":1774,"cost":{"input":0.001759,"output":0.000029999999999999997,"cacheRead":0,"cacheWrite":0,"total":0.001789}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1773,"output":15,"cacheRead":0,"cacheWrite":0,"totalTokens":1788,"cost":{"input":0.0017729999999999998,"output":0.000029999999999999997,"cacheRead":0,"cacheWrite":0,"total":0.001803}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1775,"output":15,"cacheRead":0,"cacheWrite":0,"totalTokens":1790,"cost":{"input":0.0017749999999999999,"output":0.000029999999999999997,"cacheRead":0,"cacheWrite":0,"total":0.001805}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1898,"output":13,"cacheRead":0,"cacheWrite":0,"totalTokens":1911,"cost":{"input":0.001898,"output":0.000026,"cacheRead":0,"cacheWrite":0,"total":0.001924}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1922,"output":13,"cacheRead":0,"cacheWrite":0,"totalTokens":1935,"cost":{"input":0.0019219999999999999,"output":0.000026,"cacheRead":0,"cacheWrite":0,"total":0.0019479999999999999}}"#,
        ),
        (
            "mock-model",
            r#"{"input":1950,"output":13,"cacheRead":0,"cacheWrite":0,"totalTokens":1963,"cost":{"input":0.00195,"output":0.000026,"cacheRead":0,"cacheWrite":0,"total":0.001976}}"#,
        ),
        (
            "mock-model",
            r#"{"input":2117,"output":17,"cacheRead":0,"cacheWrite":0,"totalTokens":2134,"cost":{"input":0.002117,"output":0.000034,"cacheRead":0,"cacheWrite":0,"total":0.002151}}"#,
        ),
        (
            "mock-model",
            r#"{"input":2141,"output":17,"cacheRead":0,"cacheWrite":0,"totalTokens":2158,"cost":{"input":0.002141,"output":0.000034,"cacheRead":0,"cacheWrite":0,"total":0.0021750000000000003}}"#,
        ),
        (
            "mock-model",
            r#"{"input":2176,"output":17,"cacheRead":0,"cacheWrite":0,"totalTokens":2193,"cost":{"input":0.002176,"output":0.000034,"cacheRead":0,"cacheWrite":0,"total":0.00221}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1404,"output":18,"cacheRead":0,"cacheWrite":0,"totalTokens":1422,"cost":{"input":0.0042120000000000005,"output":0.00027,"cacheRead":0,"cacheWrite":0,"total":0.004482000000000001}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1406,"output":18,"cacheRead":0,"cacheWrite":0,"totalTokens":1424,"cost":{"input":0.004218,"output":0.00027,"cacheRead":0,"cacheWrite":0,"total":0.004488000000000001}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1406,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":1413,"cost":{"input":0.004218,"output":0.000105,"cacheRead":0,"cacheWrite":0,"total":0.0043230000000000005}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1411,"output":18,"cacheRead":0,"cacheWrite":0,"totalTokens":1429,"cost":{"input":0.004233,"output":0.00027,"cacheRead":0,"cacheWrite":0,"total":0.004503}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1455,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":1461,"cost":{"input":0.004365,"output":0.00009,"cacheRead":0,"cacheWrite":0,"total":0.004455}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1472,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":1478,"cost":{"input":0.004416,"output":0.00009,"cacheRead":0,"cacheWrite":0,"total":0.004506}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1504,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":1510,"cost":{"input":0.004512,"output":0.00009,"cacheRead":0,"cacheWrite":0,"total":0.004602}}"#,
        ),
        (
            "mock-thinker",
            r#"{"input":1578,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":1579,"cost":{"input":0.004734,"output":0.000015,"cacheRead":0,"cacheWrite":0,"total":0.004749000000000001}}"#,
        ),
    ];

    #[test]
    fn matches_golden_sessions_to_the_bit() {
        for (model_id, line) in GOLDEN {
            let model = match *model_id {
                "mock-model" => model(1.0, 2.0, 0.0, 0.0),
                "mock-thinker" => model(3.0, 15.0, 0.3, 3.75),
                other => panic!("unknown golden model {other}"),
            };
            let expected: Usage = serde_json::from_str(line).expect("golden usage");
            let mut usage = Usage {
                cost: UsageCost::default(),
                ..expected
            };
            let returned = calculate_cost(&model, &mut usage);
            assert_eq!(returned, usage.cost);
            // The 0.73 golden predates `totalFromProvider`; the buckets must still match bit for bit.
            assert_eq!(usage.cost.total_from_provider, Some(false));
            usage.cost.total_from_provider = expected.cost.total_from_provider;
            assert_eq!(usage.cost, expected.cost, "{line}");
        }
    }

    #[test]
    fn golden_anthropic_total() {
        let mut usage = Usage {
            input: 1406,
            output: 18,
            ..Default::default()
        };
        calculate_cost(&model(3.0, 15.0, 0.3, 3.75), &mut usage);
        assert_eq!(usage.cost.total, 0.004488000000000001);
    }

    #[test]
    fn cache_buckets_sum_in_pi_order() {
        // Values computed by pi 1.6.0's calculateCost (0.73.1 priced cache writes per token and
        // got 0.012960000000000001).
        let mut usage = Usage {
            input: 1234,
            output: 567,
            cache_read: 89012,
            cache_write: 3456,
            ..Default::default()
        };
        calculate_cost(&model(3.0, 15.0, 0.3, 3.75), &mut usage);
        assert_eq!(
            usage.cost,
            UsageCost {
                input: 0.003702,
                output: 0.008505,
                cache_read: 0.026703599999999997,
                cache_write: 0.01296,
                total: 0.051870599999999996,
                total_from_provider: Some(false),
            }
        );
        let mut usage = Usage {
            input: 7,
            output: 13,
            cache_read: 1001,
            cache_write: 77,
            ..Default::default()
        };
        calculate_cost(&model(0.33, 2.75, 0.015, 0.1), &mut usage);
        assert_eq!(
            usage.cost,
            UsageCost {
                input: 0.00000231,
                output: 0.00003575,
                cache_read: 0.000015015,
                cache_write: 0.0000077,
                total: 0.000060775,
                total_from_provider: Some(false),
            }
        );
    }

    #[test]
    fn free_models_cost_nothing() {
        let mut usage = Usage {
            input: 100,
            output: 100,
            ..Default::default()
        };
        let cost = calculate_cost(&model(0.0, 0.0, 0.0, 0.0), &mut usage);
        assert_eq!(
            cost,
            UsageCost {
                total_from_provider: Some(false),
                ..UsageCost::default()
            }
        );
    }
}
