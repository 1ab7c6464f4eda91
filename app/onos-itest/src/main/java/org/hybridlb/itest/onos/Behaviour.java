package org.hybridlb.itest.onos;

import java.lang.invoke.MethodHandles;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * An ONOS service interface backed by a plain object: a call goes to the object's public method of
 * the same name and parameter types; any other call answers as an empty network would (no device,
 * no link, no flow: empty collections, {@code false}, zero, {@code null}) or, when {@code strict},
 * throws naming the method. ONOS's service interfaces have dozens of methods; the app needs a few.
 */
final class Behaviour {
    private Behaviour() {
    }

    static <T> T of(Class<T> service, Object behaviour) {
        return of(service, behaviour, false);
    }

    static <T> T of(Class<T> service, Object behaviour, boolean strict) {
        // the interface's own bundle sees every type its methods name
        return service.cast(Proxy.newProxyInstance(service.getClassLoader(), new Class<?>[] {service},
                (proxy, method, args) -> {
                    Method own = ownMethod(behaviour, method);
                    if (own != null) {
                        try {
                            return own.invoke(behaviour, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                    if (method.getDeclaringClass() == Object.class) {
                        return objectMethod(proxy, method, args, service);
                    }
                    if (method.isDefault()) {
                        return MethodHandles.privateLookupIn(method.getDeclaringClass(), MethodHandles.lookup())
                                .unreflectSpecial(method, method.getDeclaringClass())
                                .bindTo(proxy).invokeWithArguments(args == null ? new Object[0] : args);
                    }
                    if (strict) {
                        throw new UnsupportedOperationException(service.getSimpleName() + "." + method.getName()
                                + " is not part of the stand-in");
                    }
                    return nothing(method.getReturnType());
                }));
    }

    private static Method ownMethod(Object behaviour, Method method) {
        try {
            Method m = behaviour.getClass().getMethod(method.getName(), method.getParameterTypes());
            return m.getDeclaringClass() == Object.class ? null : m;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static Object objectMethod(Object proxy, Method method, Object[] args, Class<?> service) {
        switch (method.getName()) {
            case "equals":
                return proxy == args[0];
            case "hashCode":
                return System.identityHashCode(proxy);
            default:
                return "stand-in " + service.getSimpleName();
        }
    }

    /** What an empty network answers for a value of this type. */
    private static Object nothing(Class<?> type) {
        if (type.isPrimitive()) {
            return type == void.class ? null : Array.get(Array.newInstance(type, 1), 0);
        } else if (type == Set.class) {
            return Set.of();
        } else if (type == List.class || type == Collection.class || type == Iterable.class) {
            return List.of();
        } else if (type == Map.class) {
            return Map.of();
        } else if (type == Optional.class) {
            return Optional.empty();
        } else if (type == Stream.class) {
            return Stream.empty();
        }
        return null;
    }
}
