// delayq/no-prototype-keys: a string that is not a literal (a topic, an id, a header name,
// anything a user may spell `__proto__` or `constructor`) never indexes a plain object.
// On `{}`, `o[name] = v` with name `__proto__` replaces the object's prototype and
// `(o[name] ??= {})[k] = v` writes Object.prototype; `o[name]` with name `constructor` is a
// function before anything was stored; `name in o` is true for every Object.prototype
// member. Use a Map, or a null-prototype object typed `Dict` (src/core/dict.ts: `dict()`,
// `dictOf()`, `asDict()`), or `own(record, name)` for a lookup in a constant table.
//
// Reported: `o[k]` (read or write) and `k in o` where k's type is a wide string (string, a
// template literal, a string enum-like that is not a union of literals) and o is neither an
// array, a tuple, a typed array, a string, nor a `Dict`.
import ts from 'typescript';
import { ESLintUtils } from '@typescript-eslint/utils';

const BRAND = '__@NULL_PROTOTYPE';

function isWideString(type) {
  if (type.isUnion()) return type.types.some(isWideString);
  if (type.isIntersection()) return type.types.some(isWideString);
  return (type.flags & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral | ts.TypeFlags.StringMapping | ts.TypeFlags.Any)) !== 0;
}

function isDict(type) {
  if (type.isUnion()) return type.types.every((t) => isDict(t) || (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) !== 0);
  return type.getProperties().some((p) => String(p.escapedName).startsWith(BRAND));
}

function isSafeTarget(checker, type) {
  if (type.isUnion()) return type.types.every((t) => isSafeTarget(checker, t) || (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) !== 0);
  if (checker.isArrayType(type) || checker.isTupleType(type)) return true;
  if ((type.flags & (ts.TypeFlags.StringLike | ts.TypeFlags.Any | ts.TypeFlags.Unknown)) !== 0) return true;
  const name = type.getSymbol()?.getName() ?? '';
  if (/^(?:Int8|Uint8|Uint8Clamped|Int16|Uint16|Int32|Uint32|Float32|Float64|BigInt64|BigUint64)Array$|^Buffer$/.test(name)) return true;
  return isDict(type);
}

export const noPrototypeKeys = ESLintUtils.RuleCreator.withoutDocs({
  meta: {
    type: 'problem',
    messages: {
      index: 'A string key on a plain object reaches Object.prototype (`__proto__`, `constructor`): use a Map, a Dict (dict() from src/core/dict.ts) or own().',
      in: '`name in object` is true for Object.prototype members (`constructor`, `toString`): use a Map, a Dict or Object.hasOwn.',
    },
    schema: [],
  },
  defaultOptions: [],
  create(context) {
    const services = ESLintUtils.getParserServices(context);
    const checker = services.program.getTypeChecker();
    const typeOf = (node) => checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node));
    return {
      MemberExpression(node) {
        if (!node.computed || node.property.type === 'Literal') return;
        if (!isWideString(typeOf(node.property))) return;
        if (isSafeTarget(checker, typeOf(node.object))) return;
        context.report({ node, messageId: 'index' });
      },
      BinaryExpression(node) {
        if (node.operator !== 'in' || node.left.type === 'Literal' || node.left.type === 'PrivateIdentifier') return;
        if (!isWideString(typeOf(node.left))) return;
        if (isSafeTarget(checker, typeOf(node.right))) return;
        context.report({ node, messageId: 'in' });
      },
    };
  },
});

export const plugin = { rules: { 'no-prototype-keys': noPrototypeKeys } };
